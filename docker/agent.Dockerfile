# sandprobe/agent: a minimal "agent" container to run the probe in, like an AI coding agent's
# sandbox: busybox userland, an unprivileged `agent` user (uid 1000) working in /workspace,
# and the usual secrets a policy denies (/etc/shadow 0640 root, /root 0700). The probe itself is
# not in the image: profiles bind-mount {probe_dir} read-only at /opt/sandprobe.
# Built by docker/build-images.sh from a context holding only `busybox` (busybox-static).
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
# Numeric ids everywhere: busybox resolves names through /etc/passwd, which is written here.
RUN mkdir -p /etc /workspace /tmp /var/tmp /home/agent /root /opt/sandprobe /dev/shm \
 && printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
                  'agent:x:1000:1000:agent:/home/agent:/bin/sh' > /etc/passwd \
 && printf '%s\n' 'root:x:0:' 'agent:x:1000:' > /etc/group \
 && printf '%s\n' 'root:!:19000:0:99999:7:::' 'agent:!:19000:0:99999:7:::' > /etc/shadow \
 && chown 0:0 /etc/passwd /etc/group /etc/shadow \
 && chmod 0644 /etc/passwd /etc/group \
 && chmod 0640 /etc/shadow \
 && chown 1000:1000 /workspace /home/agent \
 && chmod 0755 /workspace /home/agent \
 && chmod 1777 /tmp /var/tmp \
 && chmod 0700 /root
USER 1000:1000
WORKDIR /workspace
ENV HOME=/home/agent PATH=/bin
CMD ["/bin/sh"]
