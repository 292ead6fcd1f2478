package cm

import "strconv"

// State is the state of one connection or SIDR request (enum ib_cm_state).
type State uint8

// Connection states.
const (
	StateIdle State = iota
	StateREQSent
	StateREQRcvd
	StateMRAREQSent
	StateMRAREQRcvd
	StateREPSent
	StateREPRcvd
	StateMRAREPSent
	StateMRAREPRcvd
	StateEstablished
	StateDREQSent
	StateDREQRcvd
	StateTimewait
	StateSIDRREQSent
	StateSIDRREQRcvd
)

var stateNames = [...]string{
	StateIdle:        "Idle",
	StateREQSent:     "REQSent",
	StateREQRcvd:     "REQRcvd",
	StateMRAREQSent:  "MRAREQSent",
	StateMRAREQRcvd:  "MRAREQRcvd",
	StateREPSent:     "REPSent",
	StateREPRcvd:     "REPRcvd",
	StateMRAREPSent:  "MRAREPSent",
	StateMRAREPRcvd:  "MRAREPRcvd",
	StateEstablished: "Established",
	StateDREQSent:    "DREQSent",
	StateDREQRcvd:    "DREQRcvd",
	StateTimewait:    "Timewait",
	StateSIDRREQSent: "SIDRREQSent",
	StateSIDRREQRcvd: "SIDRREQRcvd",
}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}
