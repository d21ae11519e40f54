// fmt's compiled part, built here from the installed headers into a static archive (sp_fmt).
//
// Why: Debian ships fmt as headers plus libfmt.so, and no libfmt.a. Linking libfmt.so makes every
// `sandprobe` start load libstdc++.so too (libfmt needs it), which costs ~0.55 ms per process on
// this machine: a tenth of a bwrap launch. With fmt compiled in, the runner links libstdc++ and
// libgcc statically and loads only libc and libm (cli/CMakeLists.txt).
//
// Header-only fmt (FMT_HEADER_ONLY) would do the same but nearly doubles the compile time of
// every file that includes fmt (4.0 s -> 7.3 s for reports/console_report.cc).
//
// Outside header-only mode format-inl.h defines fmt's out-of-line functions (FMT_FUNC is empty),
// so including it here emits them once. Its function templates are emitted only where
// instantiated: the lines below instantiate, for char, the ones the inline parts of fmt's
// headers call (the lists of fmt's own src/format.cc, which differ between major versions). A
// missing one is a link error naming the symbol, never a silent difference.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

#if FMT_VERSION >= 110000
#error "fmt 11 or later: add its instantiation list here (see fmt's src/format.cc); fmt 9 and 10 are listed"
#elif FMT_VERSION >= 100000
// fmt 10 (Debian 13's 10.1; compiled against it in a trixie root).
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template void buffer<char>::append(const char*, const char*);
template void vformat_to(buffer<char>&, string_view, typename vformat_args<>::type, locale_ref);
#else
// fmt 9 (Debian 12's 9.1).
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template void buffer<char>::append<char>(const char*, const char*);
template void vformat_to<char>(buffer<char>&, string_view,
                               basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
template auto dragonbox::to_decimal<float>(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal<double>(double x) noexcept -> dragonbox::decimal_fp<double>;
#endif

}  // namespace detail
FMT_END_NAMESPACE
