package cm_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// Two managers connect and disconnect the way rping does. The loop that
// carries datagrams between them stands in for QP1.
func Example() {
	counter := uint32(0)
	rnd := func() uint32 { counter += 0x1111; return counter }
	client := cm.New(cm.Config{CAGUID: 0x0a, Rand: rnd})
	server := cm.New(cm.Config{CAGUID: 0x0b, Rand: rnd})
	clientGID := cm.Addr{GID: netip.MustParseAddr("::ffff:10.0.0.1").As16(), QPN: cm.QP1}
	serverGID := cm.Addr{GID: netip.MustParseAddr("::ffff:10.0.0.2").As16(), QPN: cm.QP1}
	sid := mad.ServiceID(mad.PortSpaceTCP, 7174)
	_ = server.Listen(sid)
	now := time.Unix(0, 0)

	// deliver prints one side's events and reacts to them as an RDMA-CM
	// layer would, then carries its datagrams to the other side.
	var deliver func(from *cm.Manager, out *cm.Output)
	deliver = func(from *cm.Manager, out *cm.Output) {
		to, src := server, clientGID
		if from == server {
			to, src = client, serverGID
		}
		for _, e := range out.Events {
			side := "client"
			if from == server {
				side = "server"
			}
			fmt.Printf("%s: %v (%v)\n", side, e.Type, e.State)
			var next cm.Output
			switch e.Type {
			case cm.EventREQReceived:
				// Create the QP, INIT→RTR with e.Attrs, then:
				_ = from.Accept(now, e.Conn, cm.AcceptParams{LocalQPN: 0x12, ResponderResources: 1, InitiatorDepth: 1, RNRRetryCount: 7}, &next)
			case cm.EventREPReceived:
				// RTR and RTS with e.Attrs, then:
				_ = from.SendRTU(now, e.Conn, nil, &next)
			case cm.EventDREQReceived:
				_ = from.Disconnect(now, e.Conn, nil, &next)
			}
			deliver(from, &next)
		}
		for _, d := range out.Datagrams {
			var next cm.Output
			to.Receive(now, src, d.MAD, &next)
			deliver(to, &next)
		}
	}

	pd, _ := mad.AppendCMAPrivateData(nil, &mad.CMAHeaderFields{SrcPort: 40000,
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2")}, nil)
	var out cm.Output
	id, _ := client.Connect(now, cm.ConnectParams{
		ServiceID: sid,
		Path:      cm.Path{LocalGID: clientGID.GID, RemoteGID: serverGID.GID, HopLimit: 64, MTU: mad.MTU1024},
		Transport: mad.TransportRC, LocalQPN: 0x11,
		ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7,
		PrivateData: pd,
	}, &out)
	deliver(client, &out)

	out = cm.Output{}
	_ = client.Disconnect(now, id, nil, &out)
	deliver(client, &out)

	// Both sides leave timewait after one local ACK timeout.
	now = client.Deadline()
	out = cm.Output{}
	client.Tick(now, &out)
	deliver(client, &out)
	out = cm.Output{}
	server.Tick(server.Deadline(), &out)
	deliver(server, &out)
	// Output:
	// server: REQReceived (REQRcvd)
	// client: REPReceived (REPRcvd)
	// client: Established (Established)
	// server: Established (Established)
	// server: DREQReceived (DREQRcvd)
	// client: Disconnected (Timewait)
	// client: TimewaitExit (Idle)
	// server: TimewaitExit (Idle)
}
