#!/bin/sh
# Rebuilds the golden connection manager captures from full captures of RDMA-CM runs and has
# Wireshark decode them. Usage: regen.sh NAME FULL.pcap [NAME FULL.pcap ...]
# For each pair it writes NAME.pcap, only the MADs to QP1 of FULL.pcap (Ethernet, classic pcap),
# and NAME.tshark.csv, one row per frame of NAME.pcap with Wireshark's value of every MAD and CM
# field the tests compare. The flow label and packet rate of the REQ's path are left out: Wireshark
# 4.0 shifts the 20-bit flow label by 20 bits instead of 12, so both read wrong.
#
# The captures: kernel-rxe-rping is rping between two kernel rxe peers (Debian's 6.1 kernel), the
# REQ, REP, RTU, DREQ and DREP of one connection and then five retransmissions of a REQ to a
# server that had gone. The others come from the interop suite (test/interop, run with -keep),
# kernel rxe in the same kernel against gorxe: TOOL-gorxe-client-ipvN has gorxe as the client
# and kernel rxe as the server, TOOL-kernel-client-ipvN the other way round, and rping-loss-* ran
# with a quarter of the MADs and 2 % of the other packets dropped (in rping-loss-kernel-client the
# kernel's RTU was lost three times: gorxe retransmitted its REP, and the kernel answered each).
set -eu
cd "$(dirname "$0")"
fields="frame.number
infiniband.bth.destqp
infiniband.mad.baseversion infiniband.mad.mgmtclass infiniband.mad.classversion infiniband.mad.method
infiniband.mad.status infiniband.mad.classspecific infiniband.mad.transactionid
infiniband.mad.attributeid infiniband.mad.attributemodifier
infiniband.cm.req infiniband.cm.req.serviceid infiniband.cm.req.serviceid.protocol
infiniband.cm.req.serviceid.dport infiniband.cm.req.localcaguid infiniband.cm.req.localqkey
infiniband.cm.req.localqpn infiniband.cm.req.responderres infiniband.cm.req.initdepth
infiniband.cm.req.remoteresptout infiniband.cm.req.transpsvctype infiniband.cm.req.e2eflowctrl
infiniband.cm.req.startpsn infiniband.cm.req.localresptout infiniband.cm.req.retrcount
infiniband.cm.req.pkey infiniband.cm.req.pppmtu infiniband.cm.req.rnrretrcount
infiniband.cm.req.maxcmretr infiniband.cm.req.srq
infiniband.cm.req.prim_localgid infiniband.cm.req.prim_remotegid
infiniband.cm.req.prim_localgid_ipv4 infiniband.cm.req.prim_remotegid_ipv4
infiniband.cm.req.prim_tfcclass infiniband.cm.req.prim_hoplim infiniband.cm.req.prim_localacktout
infiniband.cm.req.ip_cm.majv infiniband.cm.req.ip_cm.ipv infiniband.cm.req.ip_cm.sport
infiniband.cm.req.ip_cm.sip4 infiniband.cm.req.ip_cm.dip4
infiniband.cm.req.ip_cm.sip6 infiniband.cm.req.ip_cm.dip6
infiniband.cm.rep infiniband.cm.rep.remotecommid infiniband.cm.rep.localqkey infiniband.cm.rep.localqpn
infiniband.cm.rep.startpsn infiniband.cm.rep.respres infiniband.cm.rep.initdepth
infiniband.cm.rep.tgtackdelay infiniband.cm.rep.failoveracc infiniband.cm.rep.e2eflowctrl
infiniband.cm.rep.rnrretrcount infiniband.cm.rep.srq infiniband.cm.rep.localcaguid
infiniband.cm.rtu.localcommid infiniband.cm.rtu.remotecommid
infiniband.cm.rej.localcommid infiniband.cm.rej.remotecommid infiniband.cm.rej.msgrej
infiniband.cm.rej.rejinfolen infiniband.cm.rej.reason
infiniband.cm.dreq.localcommid infiniband.cm.dreq.remotecommid infiniband.cm.req.remoteqpneecn
infiniband.cm.drsp.localcommid infiniband.cm.drsp.remotecommid"
while [ $# -ge 2 ]; do
	name=$1 full=$2
	shift 2
	tshark -r "$full" -Y 'infiniband.bth.destqp == 1' -F pcap -w "$name.pcap"
	args=""
	for f in $fields; do args="$args -e $f"; done
	# shellcheck disable=SC2086
	tshark -r "$name.pcap" -T fields -E header=y -E separator=, -E quote=d -E occurrence=f $args >"$name.tshark.csv"
done
