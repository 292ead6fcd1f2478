#!/bin/sh
# /init of the interop test VM: bring up kernel rxe on the virtio NIC, then hand over to the agent.
# Parameters come from the kernel command line: gorxe.ip4=A/N gorxe.ip6=A/N gorxe.mtu=M.
export PATH=/bin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run /var/tmp
mount -t tmpfs tmpfs /tmp

fail() {
	echo "GORXE-INIT-FAILED: $*"
	poweroff -f
}

for m in $(cat /modules/order); do
	insmod "/modules/$m.ko" || fail "insmod $m"
done
mount -t configfs configfs /sys/kernel/config 2>/dev/null

for arg in $(cat /proc/cmdline); do
	case "$arg" in
	gorxe.ip4=*) ip4=${arg#gorxe.ip4=} ;;
	gorxe.ip6=*) ip6=${arg#gorxe.ip6=} ;;
	gorxe.mtu=*) mtu=${arg#gorxe.mtu=} ;;
	esac
done

# No duplicate address detection: the test network is private and tentative addresses would
# delay the IPv6 GIDs.
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad
ip link set lo up
ip link set eth0 mtu "${mtu:-1500}" || fail "mtu"
ip link set eth0 up || fail "eth0 up"
[ -n "$ip4" ] && { ip addr add "$ip4" dev eth0 || fail "ip4 $ip4"; }
[ -n "$ip6" ] && { ip -6 addr add "$ip6" dev eth0 || fail "ip6 $ip6"; }
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add"

echo "GORXE-INIT-READY"
exec /agent
