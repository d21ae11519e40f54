# sandprobe/probe: nothing but the static probe, for profiles that inject it by image
# (FROM sandprobe/probe + COPY --from, or `docker cp` out of a created container) and for
# checking that the probe needs no loader, libc or /etc at all.
# Built by docker/build-images.sh from a context holding only `sandprobe-probe`.
FROM scratch
COPY sandprobe-probe /sandprobe-probe
