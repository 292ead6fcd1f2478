package cm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// inState builds a wire whose connection on one side is in state s, and
// returns the side, our connection and the peer's connection ID.
func inState(t *testing.T, s State) (w *wire, side int, id ConnID, peer ConnID) {
	w = newWire(t, Config{}, Config{})
	var a ConnID
	w.do(sideA, func(m *Manager, out *Output) (err error) { a, err = m.Connect(w.now, rpingParams(t), out); return err })
	b := w.take(sideB)[0].Conn
	switch s {
	case StateREQSent:
		return w, sideA, a, b
	case StateREQRcvd:
		return w, sideB, b, a
	}
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
	switch s {
	case StateREPSent:
		return w, sideB, b, a
	case StateREPRcvd:
		return w, sideA, a, b
	}
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	if s == StateEstablished {
		return w, sideA, a, b
	}
	w.do(sideA, func(m *Manager, out *Output) error { return m.Disconnect(w.now, a, nil, out) })
	switch s {
	case StateDREQRcvd:
		return w, sideB, b, a
	case StateDREQSent:
		// B's DREQRcvd is irrelevant: messages are injected into A directly.
		return w, sideA, a, b
	}
	w.do(sideB, func(m *Manager, out *Output) error { return m.Disconnect(w.now, b, nil, out) })
	require.Equal(t, StateTimewait, s)
	return w, sideA, a, b
}

// TestTransitionTable injects each CM message, well formed for the
// connection (right IDs and QPN), into a connection in each state, and
// checks the next state and the reply (IBTA chapter 12 state diagrams as
// ib_cm implements them).
func TestTransitionTable(t *testing.T) {
	const none = mad.AttrID(0)
	type cell struct {
		next  State
		reply mad.AttrID
	}
	table := map[State]map[mad.AttrID]cell{
		StateREQSent: {
			mad.AttrREP: {StateREPRcvd, none}, mad.AttrRTU: {StateREQSent, none},
			// We do not know the peer's ID yet, so its DREQ names no
			// connection of ours: it gets a DREP, as ib_cm's cm_issue_drep.
			mad.AttrDREQ: {StateREQSent, mad.AttrDREP}, mad.AttrDREP: {StateREQSent, none},
			mad.AttrREJ: {StateIdle, none}, mad.AttrMRA: {StateMRAREQRcvd, none},
		},
		StateREQRcvd: {
			mad.AttrREQ: {StateMRAREQSent, mad.AttrMRA}, mad.AttrREP: {StateREQRcvd, mad.AttrREJ},
			mad.AttrRTU: {StateREQRcvd, none}, mad.AttrDREQ: {StateREQRcvd, none},
			mad.AttrDREP: {StateREQRcvd, none}, mad.AttrREJ: {StateIdle, none}, mad.AttrMRA: {StateREQRcvd, none},
		},
		StateREPSent: {
			mad.AttrREQ: {StateREPSent, mad.AttrREP}, mad.AttrREP: {StateREPSent, mad.AttrREJ},
			mad.AttrRTU: {StateEstablished, none}, mad.AttrDREQ: {StateDREQRcvd, none},
			mad.AttrDREP: {StateREPSent, none}, mad.AttrREJ: {StateIdle, none}, mad.AttrMRA: {StateMRAREPRcvd, none},
		},
		StateREPRcvd: {
			mad.AttrREP: {StateMRAREPSent, mad.AttrMRA}, mad.AttrRTU: {StateREPRcvd, none},
			mad.AttrDREQ: {StateREPRcvd, none}, mad.AttrDREP: {StateREPRcvd, none},
			mad.AttrREJ: {StateTimewait, none}, mad.AttrMRA: {StateREPRcvd, none},
		},
		StateEstablished: {
			mad.AttrREP: {StateEstablished, mad.AttrRTU}, mad.AttrRTU: {StateEstablished, none},
			mad.AttrDREQ: {StateDREQRcvd, none}, mad.AttrDREP: {StateEstablished, none},
			mad.AttrREJ: {StateTimewait, none}, mad.AttrMRA: {StateEstablished, none},
		},
		StateDREQSent: {
			mad.AttrREP: {StateDREQSent, none}, mad.AttrRTU: {StateDREQSent, none},
			mad.AttrDREQ: {StateTimewait, mad.AttrDREP}, mad.AttrDREP: {StateTimewait, none},
			mad.AttrREJ: {StateTimewait, none}, mad.AttrMRA: {StateDREQSent, none},
		},
		StateDREQRcvd: {
			mad.AttrREQ: {StateDREQRcvd, none}, mad.AttrRTU: {StateDREQRcvd, none},
			mad.AttrDREQ: {StateDREQRcvd, none}, mad.AttrDREP: {StateDREQRcvd, none},
			mad.AttrREJ: {StateDREQRcvd, none}, mad.AttrMRA: {StateDREQRcvd, none},
		},
		StateTimewait: {
			mad.AttrREP: {StateTimewait, none}, mad.AttrRTU: {StateTimewait, none},
			mad.AttrDREQ: {StateTimewait, mad.AttrDREP}, mad.AttrDREP: {StateTimewait, none},
			mad.AttrREJ: {StateTimewait, none}, mad.AttrMRA: {StateTimewait, none},
		},
	}
	for state, row := range table {
		for attr, want := range row {
			t.Run(fmt.Sprintf("%v/%v", state, attr), func(t *testing.T) {
				w, side, id, peer := inState(t, state)
				require.Equal(t, state, w.state(side, id))
				info, _ := w.m[side].Conn(id)
				peerGUID := uint64(guidB)
				if side == sideB {
					peerGUID = guidA
				}
				var msg mad.MAD
				switch attr {
				case mad.AttrREQ:
					msg = w.sent[sideA][0] // the original REQ again
				case mad.AttrREP:
					msg = mad.New(attr, 9)
					_ = mad.REP(msg.Data()).Encode(&mad.REPFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id),
						LocalQPN: qpnB, LocalCAGUID: peerGUID})
				case mad.AttrRTU:
					msg = mad.New(attr, 9)
					_ = mad.RTU(msg.Data()).Encode(&mad.RTUFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id)})
				case mad.AttrDREQ:
					msg = mad.New(attr, 9)
					_ = mad.DREQ(msg.Data()).Encode(&mad.DREQFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id),
						RemoteQPN: info.Attrs.LocalQPN})
				case mad.AttrDREP:
					msg = mad.New(attr, 9)
					_ = mad.DREP(msg.Data()).Encode(&mad.DREPFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id)})
				case mad.AttrREJ:
					msg = mad.New(attr, 9)
					_ = mad.REJ(msg.Data()).Encode(&mad.REJFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id),
						Reason: mad.RejConsumerDefined})
				case mad.AttrMRA:
					kind := mad.MsgTypeREQ
					if side == sideB {
						kind = mad.MsgTypeREP
					}
					msg = mad.New(attr, 9)
					_ = mad.MRA(msg.Data()).Encode(&mad.MRAFields{LocalCommID: uint32(peer), RemoteCommID: uint32(id), MsgMRAed: kind})
				}
				var out Output
				w.m[side].Receive(w.now, w.addr[1-side], msg, &out)
				require.Equal(t, want.next, w.state(side, id))
				if want.reply == none {
					require.Empty(t, out.Datagrams)
				} else {
					require.Len(t, out.Datagrams, 1)
					require.Equal(t, want.reply, mad.MAD(out.Datagrams[0].MAD).Header().AttrID())
				}
				checkIndexes(t, w.m[side])
			})
		}
	}
}
