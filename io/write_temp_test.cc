#include "io/write_temp.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/report_fixture.h"

namespace sandprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using report_fixture::ListDir;
using report_fixture::MakeTempDir;

// A pid that ran and is gone (its start time is never 1 tick).
WriterId DeadWriter() {
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return WriterId{child, 1};
}

std::string TempOf(const std::string& target, WriterId writer) {
  return fmt::format(".{}.sandprobe-tmp.{}.{}.0123456789ab", target, writer.pid, writer.start_ticks);
}

TEST(WriteTemp, ANewTempNameSaysItsTargetAndThisWriter) {
  std::string name = NewTempName("r.json");
  std::optional<TempName> parsed = ParseTempName(name);
  ASSERT_TRUE(parsed) << name;
  EXPECT_EQ(parsed->target, "r.json");
  EXPECT_EQ(parsed->writer.pid, ::getpid());
  EXPECT_EQ(parsed->writer.start_ticks, ThisWriter()->start_ticks);
  EXPECT_NE(NewTempName("r.json"), name);  // random part
  EXPECT_FALSE(WriterGone(parsed->writer));
}

TEST(WriteTemp, OtherNamesAreNotTempNames) {
  for (const char* name : {"r.json", ".r.json", ".r.json.tmp.AbC123", ".r.json.sandprobe-tmp.1.2.0123456789a",
                           ".r.json.sandprobe-tmp.1.2.0123456789AB", ".r.json.sandprobe-tmp.x.2.0123456789ab",
                           ".r.json.sandprobe-tmp.0.2.0123456789ab", ".r.json.sandprobe-tmp.1.0123456789ab",
                           "..sandprobe-tmp.1.2.0123456789ab"}) {
    EXPECT_FALSE(ParseTempName(name)) << name;
  }
  std::optional<TempName> dotted = ParseTempName(".a.sandprobe-tmp.b.sandprobe-tmp.7.8.0123456789ab");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->target, "a.sandprobe-tmp.b");
  EXPECT_EQ(dotted->unique, "7.8.0123456789ab");
}

TEST(WriteTemp, AWriterIsGoneWhenItsPidIsGoneOrStartedAtAnotherTime) {
  EXPECT_TRUE(WriterGone(DeadWriter()));
  WriterId self = *ThisWriter();
  EXPECT_FALSE(WriterGone(self));
  EXPECT_TRUE(WriterGone({self.pid, self.start_ticks + 1}));  // a recycled pid
}

class WriteJournalTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(root_); std::filesystem::remove_all(out_); }
  // A journal entry for `temp_name` in out_, as a writer `writer` would have left it.
  void Journal(const std::string& temp_name) {
    std::optional<TempName> parsed = ParseTempName(temp_name);
    ASSERT_TRUE(parsed);
    std::filesystem::create_directory(WriteJournalDir(root_));
    ::chmod(WriteJournalDir(root_).c_str(), 0700);
    std::ofstream(WriteJournalDir(root_) + "/" + parsed->unique) << nlohmann::json{{"temp", out_ + "/" + temp_name}}.dump();
  }
  std::string root_ = MakeTempDir(), out_ = MakeTempDir();
};

TEST_F(WriteJournalTest, AnEntryLivesWhileItsWriteDoesIn0700) {
  std::string temp = out_ + "/" + NewTempName("r.json");
  {
    WriteJournalEntry entry = WriteJournalEntry::Record(root_, temp);
    ASSERT_TRUE(entry.recorded());
    struct stat st {};
    ASSERT_EQ(::stat(WriteJournalDir(root_).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    ASSERT_EQ(ListDir(WriteJournalDir(root_)).size(), 1u);
    EXPECT_TRUE(SweepDeadWrites(root_, false).empty()) << "its writer (this process) lives";
    EXPECT_EQ(ListDir(WriteJournalDir(root_)).size(), 1u);
  }
  EXPECT_TRUE(ListDir(WriteJournalDir(root_)).empty());
}

TEST_F(WriteJournalTest, ADeadWritersTempIsRemovedWithItsEntryAndADryRunOnlyLists) {
  std::string temp = TempOf("r.json", DeadWriter());
  std::ofstream(out_ + "/" + temp) << "{\"partial";
  Journal(temp);
  std::vector<DeadWrite> listed = SweepDeadWrites(root_, /*dry_run=*/true);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].temp, out_ + "/" + temp);
  EXPECT_THAT(listed[0].why, HasSubstr("is gone"));
  EXPECT_THAT(ListDir(out_), ElementsAre(temp));
  std::vector<DeadWrite> swept = SweepDeadWrites(root_, /*dry_run=*/false);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_EQ(swept[0].error, "");
  EXPECT_TRUE(ListDir(out_).empty());
  EXPECT_TRUE(ListDir(WriteJournalDir(root_)).empty());
}

TEST_F(WriteJournalTest, WhatIsNotOursIsLeftAndSaid) {
  std::string temp = TempOf("r.json", DeadWriter());
  ASSERT_EQ(::symlink("/etc/hostname", (out_ + "/" + temp).c_str()), 0);
  Journal(temp);
  std::vector<DeadWrite> swept = SweepDeadWrites(root_, false);
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_THAT(swept[0].error, HasSubstr("left alone"));
  EXPECT_THAT(ListDir(out_), ElementsAre(temp));
  EXPECT_EQ(ListDir(WriteJournalDir(root_)).size(), 1u);
}

TEST_F(WriteJournalTest, AnEntryNamingAnotherWritersTempRemovesNothing) {
  std::string temp = TempOf("r.json", DeadWriter()), unrelated = TempOf("r.json", DeadWriter());
  std::ofstream(out_ + "/" + unrelated) << "x";
  Journal(temp);
  // The entry says `unrelated`: not the temp its own name is for.
  std::string entry = WriteJournalDir(root_) + "/" + ParseTempName(temp)->unique;
  std::ofstream(entry) << nlohmann::json{{"temp", out_ + "/" + unrelated}}.dump();
  EXPECT_TRUE(SweepDeadWrites(root_, false).empty());
  EXPECT_THAT(ListDir(out_), ElementsAre(unrelated));
}

TEST_F(WriteJournalTest, AJournalDirectoryOthersCanWriteIsNotUsed) {
  std::filesystem::create_directory(WriteJournalDir(root_));
  ::chmod(WriteJournalDir(root_).c_str(), 0777);
  std::string temp = TempOf("r.json", DeadWriter());
  std::ofstream(out_ + "/" + temp) << "x";
  std::ofstream(WriteJournalDir(root_) + "/" + ParseTempName(temp)->unique)
      << nlohmann::json{{"temp", out_ + "/" + temp}}.dump();
  EXPECT_TRUE(SweepDeadWrites(root_, false).empty());
  EXPECT_THAT(ListDir(out_), ElementsAre(temp));
  EXPECT_FALSE(WriteJournalEntry::Record(root_, out_ + "/" + NewTempName("r.json")).recorded());
}

}  // namespace
}  // namespace sandprobe
