package cq

// Status is the outcome of a work request, with the numeric values of libibverbs' enum
// ibv_wc_status so that completions compare and print exactly as an rdma-core program expects.
type Status uint8

// Completion statuses (IBV_WC_*).
const (
	WCSuccess          Status = 0  // IBV_WC_SUCCESS
	WCLocLenErr        Status = 1  // IBV_WC_LOC_LEN_ERR
	WCLocQPOpErr       Status = 2  // IBV_WC_LOC_QP_OP_ERR
	WCLocEECOpErr      Status = 3  // IBV_WC_LOC_EEC_OP_ERR
	WCLocProtErr       Status = 4  // IBV_WC_LOC_PROT_ERR
	WCWRFlushErr       Status = 5  // IBV_WC_WR_FLUSH_ERR
	WCMWBindErr        Status = 6  // IBV_WC_MW_BIND_ERR
	WCBadRespErr       Status = 7  // IBV_WC_BAD_RESP_ERR
	WCLocAccessErr     Status = 8  // IBV_WC_LOC_ACCESS_ERR
	WCRemInvReqErr     Status = 9  // IBV_WC_REM_INV_REQ_ERR
	WCRemAccessErr     Status = 10 // IBV_WC_REM_ACCESS_ERR
	WCRemOpErr         Status = 11 // IBV_WC_REM_OP_ERR
	WCRetryExcErr      Status = 12 // IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExcErr   Status = 13 // IBV_WC_RNR_RETRY_EXC_ERR
	WCLocRDDViolErr    Status = 14 // IBV_WC_LOC_RDD_VIOL_ERR
	WCRemInvRDReqErr   Status = 15 // IBV_WC_REM_INV_RD_REQ_ERR
	WCRemAbortErr      Status = 16 // IBV_WC_REM_ABORT_ERR
	WCInvEECNErr       Status = 17 // IBV_WC_INV_EECN_ERR
	WCInvEECStateErr   Status = 18 // IBV_WC_INV_EEC_STATE_ERR
	WCFatalErr         Status = 19 // IBV_WC_FATAL_ERR
	WCRespTimeoutErr   Status = 20 // IBV_WC_RESP_TIMEOUT_ERR
	WCGeneralErr       Status = 21 // IBV_WC_GENERAL_ERR
	WCTMErr            Status = 22 // IBV_WC_TM_ERR
	WCTMRndvIncomplete Status = 23 // IBV_WC_TM_RNDV_INCOMPLETE
	numStatuses               = 24
)

// statusText holds the texts of ibv_wc_status_str, so logs read the same as rdma-core's tools.
var statusText = [numStatuses]string{
	WCSuccess:          "success",
	WCLocLenErr:        "local length error",
	WCLocQPOpErr:       "local QP operation error",
	WCLocEECOpErr:      "local EE context operation error",
	WCLocProtErr:       "local protection error",
	WCWRFlushErr:       "Work Request Flushed Error",
	WCMWBindErr:        "memory management operation error",
	WCBadRespErr:       "bad response error",
	WCLocAccessErr:     "local access error",
	WCRemInvReqErr:     "remote invalid request error",
	WCRemAccessErr:     "remote access error",
	WCRemOpErr:         "remote operation error",
	WCRetryExcErr:      "transport retry counter exceeded",
	WCRNRRetryExcErr:   "RNR retry counter exceeded",
	WCLocRDDViolErr:    "local RDD violation error",
	WCRemInvRDReqErr:   "remote invalid RD request",
	WCRemAbortErr:      "aborted error",
	WCInvEECNErr:       "invalid EE context number",
	WCInvEECStateErr:   "invalid EE context state",
	WCFatalErr:         "fatal error",
	WCRespTimeoutErr:   "response timeout error",
	WCGeneralErr:       "general error",
	WCTMErr:            "TM error",
	WCTMRndvIncomplete: "TM software rendezvous",
}

// String returns the text ibv_wc_status_str gives for s ("unknown" outside the enum).
func (s Status) String() string {
	if s < numStatuses {
		return statusText[s]
	}
	return "unknown"
}
