# Sourced by the images' entry points (lab-start.sh, grade-start.sh): what a container
# needs for the netns backend, and a sentence when it cannot have it.

# CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21) in this process's effective set, and the TUN device.
netns_possible() {
    eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
    [ $(( (0x$eff >> 12) & (0x$eff >> 21) & 1 )) = 1 ] && [ -c /dev/net/tun ]
}

# As root, before dropping privileges: /run/netns for OWNER (uid:gid), and a writable
# /proc/sys (Docker mounts it read-only; the netns backend sets route_localnet in its own
# namespaces for receivers bound to localhost, which CAP_NET_ADMIN allows once the
# mount is writable; the container's other sysctls stay root's). Prints a line on failure.
netns_prepare() {
    install -d -o "${1%:*}" -g "${1#*:}" /run/netns
    # (already writable with --security-opt systempaths=unconfined)
    awk '$5 == "/proc/sys" && $6 ~ /^ro/ { found = 1 } END { exit !found }' /proc/self/mountinfo || return 0
    mount -o remount,bind,rw /proc/sys 2>/dev/null \
        || echo "could not make /proc/sys writable: on the netns backend, receivers bound to localhost will not get packets"
}

NETNS_MISSING="no NET_ADMIN, SYS_ADMIN or /dev/net/tun in this container: transfers use the local backend (UDP on loopback; no TCP or iperf3); for the netns backend start it with --cap-add NET_ADMIN --cap-add SYS_ADMIN --device /dev/net/tun (docker/compose.yaml does)"
