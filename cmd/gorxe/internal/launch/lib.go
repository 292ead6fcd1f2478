package launch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// EnvLib names the directory holding gorxe's libibverbs.so.1 when --lib does not.
const EnvLib = "GORXE_LIB"

// libFile is the file that makes a directory the library's: librdmacm.so.1 beside it is a
// symlink to it.
const libFile = "libibverbs.so.1"

// modulePath is the module path in the go.mod of gorxe's source tree.
const modulePath = "github.com/gorxe/gorxe"

// libPlaces lists the directories searched for the library when neither --lib nor GORXE_LIB
// names one, in order: beside the gorxe executable exe (symlinks resolved; "" when unknown)
// ../build/clib, where make clib writes it next to make build's bin/gorxe, and ../lib/gorxe, an
// installation's PREFIX/lib/gorxe next to PREFIX/bin/gorxe; then build/clib of the gorxe source
// tree that cwd is in, for go run and a gorxe installed elsewhere.
func libPlaces(exe, cwd string) []string {
	var places []string
	if exe != "" {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		prefix := filepath.Dir(filepath.Dir(exe))
		places = append(places, filepath.Join(prefix, "build", "clib"), filepath.Join(prefix, "lib", "gorxe"))
	}
	if root := sourceTree(cwd); root != "" && !slices.Contains(places, filepath.Join(root, "build", "clib")) {
		places = append(places, filepath.Join(root, "build", "clib"))
	}
	return places
}

// sourceTree returns the root of the gorxe source tree that dir is in (the directory of the
// go.mod declaring gorxe's module), or "".
func sourceTree(dir string) string {
	if dir == "" {
		return ""
	}
	for {
		if isGorxeModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// isGorxeModule reports whether the file gomod is a go.mod declaring gorxe's module.
func isGorxeModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == modulePath
		}
	}
	return false
}

// findLib returns the absolute path of the directory holding the library: flag (--lib) if set,
// else env (GORXE_LIB) if set, else the first of places that holds it. A directory named by flag
// or env must hold it.
func findLib(flag, env string, places []string) (string, error) {
	named := func(label, dir string) (string, error) {
		if err := holdsLib(dir); err != nil {
			return "", fmt.Errorf("%s: %w (make clib writes it to build/clib)", label, err)
		}
		return filepath.Abs(dir)
	}
	switch {
	case flag != "":
		return named("--lib "+flag, flag)
	case env != "":
		return named(EnvLib+"="+env, env)
	}
	for _, dir := range places {
		if holdsLib(dir) == nil {
			return filepath.Abs(dir)
		}
	}
	where := "gorxe cannot tell where its executable is, and the current directory is in no gorxe source tree"
	if len(places) > 0 {
		where = "it is in none of " + strings.Join(places, ", ")
	}
	return "", fmt.Errorf("gorxe's %s not found (%s): run make clib in gorxe's source tree, or give its directory with --lib or %s", libFile, where, EnvLib)
}

// holdsLib says why dir does not hold the library, or nil when it does.
func holdsLib(dir string) error {
	fi, err := os.Stat(filepath.Join(dir, libFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no " + libFile + " there")
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return errors.New(libFile + " there is not a file")
	}
	return nil
}
