package guestrpc

// Port is the TCP port the agent listens on, on every guest address.
const Port = 7791

// Paths of the agent's endpoints; every one takes and returns JSON.
const (
	PathStart     = "/start"     // StartRequest -> StartResponse
	PathWait      = "/wait"      // WaitRequest -> Result
	PathListening = "/listening" // ListeningRequest -> ListeningResponse
	PathKill      = "/kill"      // WaitRequest -> no body: kill a started command
	PathPoweroff  = "/poweroff"  // no body -> no body
)

// StartRequest starts a command in the guest without waiting for it.
type StartRequest struct {
	Argv []string `json:"argv"`
	// TimeoutSec kills the command (SIGKILL) once it has run this long; zero means 60 s.
	TimeoutSec float64 `json:"timeout_sec"`
}

// StartResponse names the started command for a later WaitRequest.
type StartResponse struct {
	ID int `json:"id"`
}

// WaitRequest names a started command: /wait waits until it has exited (or been killed at its
// timeout) and forgets it; /kill kills it.
type WaitRequest struct {
	ID int `json:"id"`
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the process's exit status; -1 when it was killed or could not start.
	ExitCode int `json:"exit_code"`
	// TimedOut says the agent killed the command at its timeout.
	TimedOut bool `json:"timed_out"`
	// Output is stdout and stderr interleaved as the command wrote them.
	Output string `json:"output"`
	// Error is why the command could not be started, if it could not.
	Error   string  `json:"error,omitempty"`
	Seconds float64 `json:"seconds"`
}

// ListeningRequest waits until some socket of the guest listens on TCP port Port.
type ListeningRequest struct {
	Port       int     `json:"port"`
	TimeoutSec float64 `json:"timeout_sec"`
}

// ListeningResponse says whether the port was seen listening before the timeout.
type ListeningResponse struct {
	Listening bool `json:"listening"`
}
