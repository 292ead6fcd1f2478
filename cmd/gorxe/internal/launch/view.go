package launch

import (
	"fmt"
	"strconv"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/internal/devselect"
)

// The directories the device view puts gorxe's devices in, as the kernel lays out an RDMA
// device: its attributes, its uverbs character device's class entry, and the character devices.
// The view holds gorxe's devices only, as the library lists no others.
const (
	sysInfiniband      = "/sys/class/infiniband"
	sysInfinibandVerbs = "/sys/class/infiniband_verbs"
	devInfiniband      = "/dev/infiniband"
)

// viewRoots are the directories the view makes; everything it adds is inside one of them.
var viewRoots = []string{sysInfiniband, sysInfinibandVerbs, devInfiniband}

// viewFile is one file the view adds: a regular file holding Data, a symlink to Link, or, with
// Char, a character device.
type viewFile struct {
	Path string `json:"path"` // absolute, inside one of viewRoots
	Data string `json:"data,omitempty"`
	Link string `json:"link,omitempty"`
	Mode uint32 `json:"mode,omitempty"` // a regular file's permission bits
	// Char makes the file a stand-in for one of the kernel's RDMA character devices: the host's
	// null device bound over it. Programs check that the device exists, is a character device
	// and may be read and written (UCX lists only the devices whose /dev/infiniband/uverbsN
	// passes all three) and leave the rest to libibverbs, which never opens it here; one that
	// opens it anyway reads nothing.
	Char bool `json:"char,omitempty"`
}

// modeAttr is the permission bits of the view's sysfs attributes: read-only, as the kernel's.
const modeAttr = 0o444

// charStandIn is the character device the view binds over its RDMA devices' nodes, open to all
// as rdma-core's udev rules make the real ones.
const charStandIn = "/dev/null"

// uverbsABI is what /sys/class/infiniband_verbs/abi_version reads: the uverbs command ABI of
// the kernels rdma-core supports today.
const uverbsABI = "6"

// viewDevice is what the view shows of one device, gathered from an unbound twin of it.
type viewDevice struct {
	name   string // as ibv_get_device_list names it
	netdev string // the interface it is on, "" when none
	attr   gorxe.DeviceAttr
	port   gorxe.PortAttr
	gids   []gorxe.GIDEntry
	pkeys  []uint16
}

// queryDevice gathers what the view shows of the device cfg describes, from a twin that binds no
// UDP port (the program it is for binds it).
func queryDevice(cfg gorxe.Config) (viewDevice, error) {
	d, err := devselect.OpenUnbound(cfg)
	if err != nil {
		return viewDevice{}, err
	}
	defer d.Close()
	v := viewDevice{name: devselect.DeviceName(cfg), netdev: d.NetDev(), gids: d.GIDTable()}
	if v.attr, err = d.Query(); err != nil {
		return viewDevice{}, err
	}
	if v.port, err = d.QueryPort(1); err != nil {
		return viewDevice{}, err
	}
	for i := range int(v.port.PKeyTblLen) {
		p, err := d.QueryPKey(i)
		if err != nil {
			return viewDevice{}, err
		}
		v.pkeys = append(v.pkeys, p)
	}
	return v, nil
}

// viewFiles returns the view's files for the devices the program's library lists, in its order
// (getenv reads the program's environment, whose GORXE_ADDR chooses them as the library does).
func viewFiles(getenv func(string) string) ([]viewFile, error) {
	cfgs, err := devselect.Configs(getenv)
	if err != nil {
		return nil, err
	}
	files := []viewFile{{Path: sysInfinibandVerbs + "/abi_version", Data: uverbsABI + "\n", Mode: modeAttr}}
	if len(cfgs) > 0 {
		files = append(files, viewFile{Path: devInfiniband + "/rdma_cm", Char: true})
	}
	for i, cfg := range cfgs {
		d, err := queryDevice(cfg)
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", devselect.DeviceName(cfg), err)
		}
		files = append(files, d.files(i)...)
	}
	return files, nil
}

// files returns the view's files of the device, the index-th the library lists, whose
// ibv_device names uverbs<index> (its dev_name) and these directories (dev_path, ibdev_path).
// The contents read as the kernel's sysfs attributes of an rxe device read.
func (d viewDevice) files(index int) []viewFile {
	var out []viewFile
	attr := func(path, format string, args ...any) {
		out = append(out, viewFile{Path: path, Data: fmt.Sprintf(format+"\n", args...), Mode: modeAttr})
	}
	dir := sysInfiniband + "/" + d.name
	attr(dir+"/node_type", "%d: %s", 1, "CA")
	attr(dir+"/node_guid", "%s", guidText(d.attr.NodeGUID))
	attr(dir+"/sys_image_guid", "%s", guidText(d.attr.SysImageGUID))
	attr(dir+"/fw_ver", "%s", d.attr.FwVer)
	if d.netdev != "" {
		// rxe names the interface it is added to; programs find the interface (and from it the
		// IP address and MAC) through device/net/, as on a NIC's PCI device.
		attr(dir+"/parent", "%s", d.netdev)
		out = append(out, viewFile{Path: dir + "/device/net/" + d.netdev, Link: "/sys/class/net/" + d.netdev})
	}

	port := dir + "/ports/1"
	attr(port+"/state", "%d: %s", d.port.State, portStateName(d.port.State))
	attr(port+"/phys_state", "%d: %s", d.port.PhysState, physStateName(d.port.PhysState))
	attr(port+"/link_layer", "%s", d.port.LinkLayer)
	attr(port+"/lid", "0x%x", d.port.LID)
	attr(port+"/sm_lid", "0x%x", d.port.SMLID)
	attr(port+"/lid_mask_count", "%d", d.port.LMC)
	attr(port+"/sm_sl", "%d", d.port.SMSL)
	attr(port+"/cap_mask", "0x%08x", uint32(d.port.PortCapFlags))
	attr(port+"/rate", "%s", rateText(d.port.ActiveSpeed, d.port.ActiveWidth))
	for i, p := range d.pkeys {
		attr(port+"/pkeys/"+strconv.Itoa(i), "0x%04x", p)
	}
	// Every index of the table has a gids file, an empty entry reading as the zero GID; the
	// attributes of an entry exist only while it is populated (the kernel's fail to read).
	for i := range d.port.GIDTblLen {
		var g gorxe.GID
		if i < len(d.gids) {
			g = d.gids[i].GID
		}
		attr(port+"/gids/"+strconv.Itoa(i), "%s", g)
	}
	for i, g := range d.gids {
		attr(port+"/gid_attrs/types/"+strconv.Itoa(i), "%s", gidTypeText(g.Type))
		if g.NetDev != "" {
			attr(port+"/gid_attrs/ndevs/"+strconv.Itoa(i), "%s", g.NetDev)
		}
	}

	uverbs := "uverbs" + strconv.Itoa(index)
	attr(sysInfinibandVerbs+"/"+uverbs+"/ibdev", "%s", d.name)
	attr(sysInfinibandVerbs+"/"+uverbs+"/abi_version", "%d", 1)
	out = append(out, viewFile{Path: devInfiniband + "/" + uverbs, Char: true})
	return out
}

// guidText prints a GUID as sysfs does: four groups of four hex digits.
func guidText(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// portStateName is the name sysfs gives a port state after its number.
func portStateName(s gorxe.PortState) string {
	names := [...]string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	if int(s) < len(names) {
		return names[s]
	}
	return "UNKNOWN"
}

// physStateName is the name sysfs gives a physical port state (IBTA's PortPhysicalState).
func physStateName(s uint8) string {
	names := [...]string{"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test"}
	if int(s) < len(names) {
		return names[s]
	}
	return "<unknown>"
}

// gidTypeText is what gid_attrs/types/N reads for a GID type.
func gidTypeText(t gorxe.GIDType) string {
	if t == gorxe.GIDTypeRoCEv2 {
		return "RoCE v2"
	}
	return "IB/RoCE v1"
}

// rateText is a port's rate as sysfs prints it: the lane speed times the width, in Gb/s, then
// the width and the speed's name (SDR's is left out).
func rateText(speed, width uint8) string {
	lanes := map[uint8]int{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}[width]
	if lanes == 0 {
		lanes = 1
	}
	// Lane speeds in tenths of Gb/s, by the IBV_SPEED_* bit of active_speed.
	speeds := map[uint8]struct {
		tenths int
		name   string
	}{1: {25, ""}, 2: {50, " DDR"}, 4: {100, " QDR"}, 8: {100, " FDR10"}, 16: {140, " FDR"}, 32: {250, " EDR"}, 64: {500, " HDR"}, 128: {1000, " NDR"}}
	s, ok := speeds[speed]
	if !ok {
		s = speeds[1]
	}
	rate := s.tenths * lanes
	half := ""
	if rate%10 != 0 {
		half = ".5"
	}
	return fmt.Sprintf("%d%s Gb/sec (%dX%s)", rate/10, half, lanes, s.name)
}
