package pingpong

import (
	"fmt"

	"github.com/gorxe/gorxe"
)

// connect moves the QPs to RTR and RTS against the remote addresses (QP i to remote[i]) with the C
// tools' parameters; ud_pingpong creates its address handle instead.
func (s *session) connect(mine, remote []Dest) error {
	o := &s.o
	for i, q := range s.qps {
		av := s.addressVector(remote[i])
		var err error
		switch o.Kind {
		case UD:
			err = s.connectUD(q, mine[i].PSN, av)
		case UC:
			err = s.connectUC(i, q, mine[i].PSN, remote[i], av)
		default:
			err = s.connectRC(i, q, mine[i].PSN, remote[i], av)
		}
		if err != nil {
			if remote[i].GID.IsZero() || o.GIDIndex < 0 {
				return fmt.Errorf("%w (RoCE needs a GRH: give both sides -g, e.g. -g 1)", err)
			}
			return err
		}
	}
	return nil
}

// addressVector is the path to d: global (a GRH with hop limit 1) only when d's GID has a
// non-zero interface ID, as the C tools decide.
func (s *session) addressVector(d Dest) gorxe.AHAttr {
	av := gorxe.AHAttr{DLID: d.LID, SL: uint8(s.o.SL), PortNum: uint8(s.o.IBPort)}
	if [8]byte(d.GID[8:]) != [8]byte{} {
		av.IsGlobal = true
		av.GRH.HopLimit = 1
		av.GRH.DGID = d.GID
		av.GRH.SGIDIndex = uint8(s.o.GIDIndex)
	}
	return av
}

func (s *session) connectRC(i int, q *gorxe.QP, psn uint32, d Dest, av gorxe.AHAttr) error {
	attr := gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTUFromBytes(s.o.MTU), DestQPNum: d.QPN,
		RQPSN: d.PSN, MaxDestRdAtomic: 1, MinRNRTimer: 12, AHAttr: av}
	if err := q.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrAV|gorxe.QPAttrPathMTU|gorxe.QPAttrDestQPN|
		gorxe.QPAttrRQPSN|gorxe.QPAttrMaxDestRdAtomic|gorxe.QPAttrMinRNRTimer); err != nil {
		return fmt.Errorf("Failed to modify %s to RTR: %w", s.qpLabel(i), err)
	}
	attr = gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: psn, MaxRdAtomic: 1}
	if err := q.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrTimeout|gorxe.QPAttrRetryCnt|gorxe.QPAttrRNRRetry|
		gorxe.QPAttrSQPSN|gorxe.QPAttrMaxQPRdAtomic); err != nil {
		return fmt.Errorf("Failed to modify %s to RTS: %w", s.qpLabel(i), err)
	}
	return nil
}

func (s *session) connectUC(i int, q *gorxe.QP, psn uint32, d Dest, av gorxe.AHAttr) error {
	attr := gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTUFromBytes(s.o.MTU), DestQPNum: d.QPN,
		RQPSN: d.PSN, AHAttr: av}
	if err := q.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrAV|gorxe.QPAttrPathMTU|gorxe.QPAttrDestQPN|
		gorxe.QPAttrRQPSN); err != nil {
		return fmt.Errorf("Failed to modify %s to RTR: %w", s.qpLabel(i), err)
	}
	attr = gorxe.QPAttr{State: gorxe.QPStateRTS, SQPSN: psn}
	if err := q.Modify(&attr, gorxe.QPAttrState|gorxe.QPAttrSQPSN); err != nil {
		return fmt.Errorf("Failed to modify %s to RTS: %w", s.qpLabel(i), err)
	}
	return nil
}

func (s *session) connectUD(q *gorxe.QP, psn uint32, av gorxe.AHAttr) error {
	if err := q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState); err != nil {
		return fmt.Errorf("Failed to modify QP to RTR: %w", err)
	}
	if err := q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTS, SQPSN: psn}, gorxe.QPAttrState|gorxe.QPAttrSQPSN); err != nil {
		return fmt.Errorf("Failed to modify QP to RTS: %w", err)
	}
	ah, err := s.pd.CreateAH(&av)
	if err != nil {
		return fmt.Errorf("Failed to create AH: %w", err)
	}
	s.ah = ah
	return nil
}
