package qp

// transition is one cell of the state table: whether From→To is legal and, per QP type, which
// attributes it requires and which it accepts besides AttrState.
type transition struct {
	valid bool
	req   [numTypes]AttrMask
	opt   [numTypes]AttrMask
}

// perType builds a per-type mask array.
func perType(gsi, rc, uc, ud AttrMask) [numTypes]AttrMask {
	var m [numTypes]AttrMask
	m[TypeGSI], m[TypeRC], m[TypeUC], m[TypeUD] = gsi, rc, uc, ud
	return m
}

// transitions is the IBTA verbs state table as Linux enforces it (ib_modify_qp_is_ok), restricted
// to the QP types gorxe has and without the Ethernet L2 attributes the kernel resolves itself.
var transitions = func() (t [numStates][numStates]transition) {
	const (
		rtsOptRC = AttrCurState | AttrAltPath | AttrAccessFlags | AttrMinRNRTimer | AttrPathMigState
		rtsOptUC = AttrCurState | AttrAltPath | AttrAccessFlags | AttrPathMigState
		rtsOptUD = AttrCurState | AttrQKey
	)
	for s := range State(numStates) {
		if s != StateReset {
			t[s][StateReset].valid = true
			t[s][StateErr].valid = true
		}
	}
	t[StateReset][StateReset].valid = true
	t[StateReset][StateInit] = transition{valid: true, req: perType(
		AttrPKeyIndex|AttrQKey,
		AttrPKeyIndex|AttrPort|AttrAccessFlags,
		AttrPKeyIndex|AttrPort|AttrAccessFlags,
		AttrPKeyIndex|AttrPort|AttrQKey)}
	t[StateInit][StateInit] = transition{valid: true, opt: perType(
		AttrPKeyIndex|AttrQKey,
		AttrPKeyIndex|AttrPort|AttrAccessFlags,
		AttrPKeyIndex|AttrPort|AttrAccessFlags,
		AttrPKeyIndex|AttrPort|AttrQKey)}
	t[StateInit][StateRTR] = transition{valid: true,
		req: perType(0,
			AttrAV|AttrPathMTU|AttrDestQPN|AttrRQPSN|AttrMaxDestRdAtomic|AttrMinRNRTimer,
			AttrAV|AttrPathMTU|AttrDestQPN|AttrRQPSN,
			0),
		opt: perType(
			AttrPKeyIndex|AttrQKey,
			AttrAltPath|AttrAccessFlags|AttrPKeyIndex,
			AttrAltPath|AttrAccessFlags|AttrPKeyIndex,
			AttrPKeyIndex|AttrQKey)}
	t[StateRTR][StateRTS] = transition{valid: true,
		req: perType(AttrSQPSN,
			AttrTimeout|AttrRetryCnt|AttrRNRRetry|AttrSQPSN|AttrMaxQPRdAtomic,
			AttrSQPSN,
			AttrSQPSN),
		opt: perType(rtsOptUD, rtsOptRC, rtsOptUC, rtsOptUD)}
	t[StateRTS][StateRTS] = transition{valid: true, opt: perType(rtsOptUD, rtsOptRC, rtsOptUC, rtsOptUD)}
	t[StateRTS][StateSQD] = transition{valid: true, opt: perType(
		AttrEnSQDAsyncNotify, AttrEnSQDAsyncNotify, AttrEnSQDAsyncNotify, AttrEnSQDAsyncNotify)}
	t[StateSQD][StateRTS] = transition{valid: true, opt: perType(rtsOptUD, rtsOptRC, rtsOptUC, rtsOptUD)}
	t[StateSQD][StateSQD] = transition{valid: true, opt: perType(
		AttrPKeyIndex|AttrQKey,
		AttrPort|AttrAV|AttrTimeout|AttrRetryCnt|AttrRNRRetry|AttrMaxQPRdAtomic|AttrMaxDestRdAtomic|
			AttrAltPath|AttrAccessFlags|AttrPKeyIndex|AttrMinRNRTimer|AttrPathMigState,
		AttrAV|AttrAltPath|AttrAccessFlags|AttrPKeyIndex|AttrPathMigState,
		AttrPKeyIndex|AttrQKey)}
	t[StateSQE][StateRTS] = transition{valid: true, opt: perType(
		AttrCurState|AttrQKey, 0, AttrCurState|AttrAccessFlags, AttrCurState|AttrQKey)}
	t[StateErr][StateErr].valid = true
	return t
}()

// checkTransition applies the table: it returns a *ModifyError for an illegal transition or a mask
// with missing or extra bits.
func checkTransition(typ Type, from, to State, mask AttrMask) error {
	if from >= numStates || to >= numStates {
		return &ModifyError{Type: typ, From: from, To: to, Err: ErrInvalidTransition}
	}
	tr := &transitions[from][to]
	if !tr.valid {
		return &ModifyError{Type: typ, From: from, To: to, Err: ErrInvalidTransition}
	}
	req, opt := tr.req[typ], tr.opt[typ]
	if missing := req &^ mask; missing != 0 {
		return &ModifyError{Type: typ, From: from, To: to, Missing: missing, Err: ErrMissingAttr}
	}
	if extra := mask &^ (req | opt | AttrState); extra != 0 {
		return &ModifyError{Type: typ, From: from, To: to, Extra: extra, Err: ErrExtraAttr}
	}
	return nil
}
