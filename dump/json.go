package dump

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/packet"
)

// Record is the JSON form of a Packet, one object per line in `gorxe dump
// -json`. Keys appear in field order, with the extension headers the packet
// carries between "psn" and "payload_len": each under its lower-cased IBTA
// name ("reth", "aeth", ...) as an object of its fields' keys, or, for the
// headers the table marks scalar (immdt, ieth), as a bare number. Headers
// appear in the packet header table's RecordOrder, which follows
// Wireshark's InfiniBand dissector; field names follow it where it has them.
// A MAD to QP1 adds, after the headers, "cm" with the connection manager
// message's name ("REQ") when it is one, and "mad" with the fields of the
// MAD header and the message under Wireshark's full field names (see
// Packet.MAD): numbers, or strings for addresses. A packet gorxe's fault
// injection dropped or altered ends with "fault", the list of what it did
// ("dropped"; see Packet.Faults).
type Record struct {
	Frame   int    `json:"frame"`
	Src     string `json:"src"` // ip:port, [ip]:port for IPv6
	Dst     string `json:"dst"`
	Opcode  uint8  `json:"opcode"`
	OpName  string `json:"opname"`
	SE      bool   `json:"se"`
	MigReq  bool   `json:"migreq"`
	Pad     uint8  `json:"pad"`
	TVer    uint8  `json:"tver"`
	PKey    uint16 `json:"pkey"`
	FECN    bool   `json:"fecn"`
	BECN    bool   `json:"becn"`
	DQPN    uint32 `json:"dqpn"`
	AckReq  bool   `json:"ackreq"`
	PSN     uint32 `json:"psn"`
	Headers []HeaderRecord
	CM      string     // the CM message, "" when the packet carries none
	MAD     []MADField // the MAD's fields (names and values), nil when the packet carries none

	PayloadLen int    `json:"payload_len"`
	ICRC       string `json:"icrc"` // the four trailer bytes in wire order, "0x4ca933aa"
	ICRCOK     bool   `json:"icrc_ok"`
	// Fault names what gorxe's fault injection did to the packet
	// (Packet.Faults: ["dropped"], ["duplicated", "delayed"], ...); the key
	// is left out when it did nothing.
	Fault []string `json:"fault,omitempty"`
}

// HeaderRecord is the JSON form of one extension header: the values of the
// fields of its description in the packet header table, in their order.
type HeaderRecord struct {
	Header packet.Header
	Values []uint64
}

// Record returns the JSON form of p.
func (p *Packet) Record() Record {
	bth := &p.BTH.BTHFields
	r := Record{
		Frame:      p.Frame,
		Src:        p.Src.String(),
		Dst:        p.Dst.String(),
		Opcode:     uint8(bth.Opcode),
		OpName:     bth.Opcode.String(),
		SE:         bth.SolicitedEvent,
		MigReq:     bth.MigReq,
		Pad:        bth.PadCount,
		TVer:       bth.TransportVersion,
		PKey:       bth.PKey,
		FECN:       bth.FECN,
		BECN:       bth.BECN,
		DQPN:       bth.DestQP,
		AckReq:     bth.AckReq,
		PSN:        uint32(bth.PSN),
		PayloadLen: len(p.Payload),
		ICRC:       icrcWire(p.BTH.ICRC),
		ICRCOK:     p.ICRCErr == nil,
		Fault:      p.Faults(),
	}
	for _, l := range p.Ext {
		fs := l.Header.Desc().Fields
		hr := HeaderRecord{Header: l.Header, Values: make([]uint64, len(fs))}
		for i, f := range fs {
			hr.Values[i] = f.Value(l.Contents)
		}
		r.Headers = append(r.Headers, hr)
	}
	slices.SortFunc(r.Headers, func(a, b HeaderRecord) int {
		return int(a.Header.Desc().RecordOrder) - int(b.Header.Desc().RecordOrder)
	})
	var fields []MADField
	r.CM, fields = p.MAD()
	for _, f := range fields {
		// The record keeps what its JSON holds: name and value.
		r.MAD = append(r.MAD, MADField{Name: f.Name, Value: f.Value, Addr: f.Addr})
	}
	return r
}

// MADValue returns the field of the record's MAD named name, and false if it
// has none.
func (r *Record) MADValue(name string) (MADField, bool) {
	for _, f := range r.MAD {
		if f.Name == name {
			return f, true
		}
	}
	return MADField{}, false
}

// Header returns the record of extension header h, and false if the packet
// did not carry it.
func (r *Record) Header(h packet.Header) (HeaderRecord, bool) {
	for _, hr := range r.Headers {
		if hr.Header == h {
			return hr, true
		}
	}
	return HeaderRecord{}, false
}

// Value returns the value of the field with JSON key key, and false if the
// header has no such field.
func (hr HeaderRecord) Value(key string) (uint64, bool) {
	d := hr.Header.Desc()
	if d == nil {
		return 0, false
	}
	for i, f := range d.Fields {
		if f.Key == key && i < len(hr.Values) {
			return hr.Values[i], true
		}
	}
	return 0, false
}

// The parts of a Record that encoding/json writes by itself: the BTH fields
// before the headers, and what follows them.
type (
	recordHead struct {
		Frame  int    `json:"frame"`
		Src    string `json:"src"`
		Dst    string `json:"dst"`
		Opcode uint8  `json:"opcode"`
		OpName string `json:"opname"`
		SE     bool   `json:"se"`
		MigReq bool   `json:"migreq"`
		Pad    uint8  `json:"pad"`
		TVer   uint8  `json:"tver"`
		PKey   uint16 `json:"pkey"`
		FECN   bool   `json:"fecn"`
		BECN   bool   `json:"becn"`
		DQPN   uint32 `json:"dqpn"`
		AckReq bool   `json:"ackreq"`
		PSN    uint32 `json:"psn"`
	}
	recordTail struct {
		PayloadLen int      `json:"payload_len"`
		ICRC       string   `json:"icrc"`
		ICRCOK     bool     `json:"icrc_ok"`
		Fault      []string `json:"fault,omitempty"`
	}
)

// MarshalJSON writes r as one object: the BTH fields, the headers, the tail.
func (r Record) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(recordHead{r.Frame, r.Src, r.Dst, r.Opcode, r.OpName, r.SE, r.MigReq,
		r.Pad, r.TVer, r.PKey, r.FECN, r.BECN, r.DQPN, r.AckReq, r.PSN})
	if err != nil {
		return nil, err
	}
	tail, err := json.Marshal(recordTail{r.PayloadLen, r.ICRC, r.ICRCOK, r.Fault})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1]) // without its closing brace
	for _, hr := range r.Headers {
		d := hr.Header.Desc()
		if d == nil || len(hr.Values) != len(d.Fields) {
			return nil, fmt.Errorf("dump: record of %v has %d values", hr.Header, len(hr.Values))
		}
		b.WriteString(`,"` + strings.ToLower(d.Name) + `":`)
		if d.Scalar {
			b.WriteString(strconv.FormatUint(hr.Values[0], 10))
			continue
		}
		for i, f := range d.Fields {
			b.WriteString(map[bool]string{true: "{", false: ","}[i == 0])
			b.WriteString(`"` + f.Key + `":` + strconv.FormatUint(hr.Values[i], 10))
		}
		b.WriteByte('}')
	}
	if r.CM != "" {
		b.WriteString(`,"cm":` + strconv.Quote(r.CM))
	}
	if r.MAD != nil {
		b.WriteString(`,"mad":`)
		for i, f := range r.MAD {
			b.WriteString(map[bool]string{true: "{", false: ","}[i == 0])
			b.WriteString(strconv.Quote(f.Name) + ":")
			if f.IsAddr() {
				b.WriteString(strconv.Quote(f.Addr.String()))
			} else {
				b.WriteString(strconv.FormatUint(f.Value, 10))
			}
		}
		b.WriteByte('}')
	}
	b.WriteByte(',')
	b.Write(tail[1:]) // without its opening brace
	return b.Bytes(), nil
}

// unmarshalMAD reads the "mad" object of a record, keeping its fields in
// order.
func unmarshalMAD(raw json.RawMessage) ([]MADField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("dump: record mad: not an object")
	}
	fields := []MADField{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("dump: record mad: %w", err)
		}
		f := MADField{Name: t.(string)}
		if t, err = dec.Token(); err != nil {
			return nil, fmt.Errorf("dump: record mad: %w", err)
		}
		switch v := t.(type) {
		case json.Number:
			if f.Value, err = strconv.ParseUint(string(v), 10, 64); err != nil {
				return nil, fmt.Errorf("dump: record mad %s: %w", f.Name, err)
			}
		case string:
			if f.Addr, err = netip.ParseAddr(v); err != nil {
				return nil, fmt.Errorf("dump: record mad %s: %w", f.Name, err)
			}
		default:
			return nil, fmt.Errorf("dump: record mad %s: neither a number nor an address", f.Name)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// UnmarshalJSON reads a record MarshalJSON wrote.
func (r *Record) UnmarshalJSON(b []byte) error {
	var head recordHead
	var tail recordTail
	var keys map[string]json.RawMessage
	for _, v := range []any{&head, &tail, &keys} {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	*r = Record{Frame: head.Frame, Src: head.Src, Dst: head.Dst, Opcode: head.Opcode, OpName: head.OpName,
		SE: head.SE, MigReq: head.MigReq, Pad: head.Pad, TVer: head.TVer, PKey: head.PKey, FECN: head.FECN,
		BECN: head.BECN, DQPN: head.DQPN, AckReq: head.AckReq, PSN: head.PSN,
		PayloadLen: tail.PayloadLen, ICRC: tail.ICRC, ICRCOK: tail.ICRCOK, Fault: tail.Fault}
	for h := range packet.Header(packet.NumHeaders) {
		d := h.Desc()
		raw, ok := keys[strings.ToLower(d.Name)]
		if !ok {
			continue
		}
		hr := HeaderRecord{Header: h, Values: make([]uint64, len(d.Fields))}
		if d.Scalar {
			if err := json.Unmarshal(raw, &hr.Values[0]); err != nil {
				return fmt.Errorf("dump: record %s: %w", d.Name, err)
			}
		} else {
			var obj map[string]uint64
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("dump: record %s: %w", d.Name, err)
			}
			for i, f := range d.Fields {
				hr.Values[i] = obj[f.Key]
			}
		}
		r.Headers = append(r.Headers, hr)
	}
	slices.SortFunc(r.Headers, func(a, b HeaderRecord) int {
		return int(a.Header.Desc().RecordOrder) - int(b.Header.Desc().RecordOrder)
	})
	if raw, ok := keys["cm"]; ok {
		if err := json.Unmarshal(raw, &r.CM); err != nil {
			return fmt.Errorf("dump: record cm: %w", err)
		}
	}
	if raw, ok := keys["mad"]; ok {
		var err error
		if r.MAD, err = unmarshalMAD(raw); err != nil {
			return err
		}
	}
	return nil
}

// icrcWire formats an ICRC value as its four wire bytes in order, the way
// Wireshark prints it. The wire carries the CRC little-endian.
func icrcWire(icrc uint32) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], icrc)
	return fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(b[:]))
}
