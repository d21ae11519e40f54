# sandprobe/tinyproxy-allowlist: Debian's tinyproxy (package tinyproxy-bin) FROM scratch with
# its shared libraries and docker/tinyproxy-allowlist.{conf,filter}: an egress proxy that lets
# through one lab name (sandboxes/docker-proxy-allowlist.json). Nothing else is in the image:
# no shell, no resolver but glibc's own (the lab's, from the resolv.conf of the namespace the
# container shares). Built by docker/build-images.sh from a context holding only those files.
FROM scratch
COPY root/ /
USER 65534:65534
ENTRYPOINT ["/usr/bin/tinyproxy", "-d", "-c", "/etc/tinyproxy/tinyproxy.conf"]
