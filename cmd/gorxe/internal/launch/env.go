package launch

import (
	"strings"

	"github.com/gorxe/gorxe/internal/devselect"
)

// envLibraryPath is the dynamic loader's search path, ahead of the system's directories.
const envLibraryPath = "LD_LIBRARY_PATH"

// environ returns the program's environment: env (KEY=VALUE entries) with lib first on
// LD_LIBRARY_PATH, ahead of the directories it had there, and GORXE_ADDR=addr unless addr is ""
// (the program then reads env's own, if any). Each variable it sets comes once, at the end, with
// the value the first entry of it in env had (what getenv reads) extended.
func environ(env []string, lib, addr string) []string {
	set := map[string]string{envLibraryPath: lib}
	if addr != "" {
		set[devselect.EnvAddr] = addr
	}
	out := make([]string, 0, len(env)+len(set))
	oldPath, seenPath := "", false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
			continue
		}
		if k == envLibraryPath && !seenPath {
			oldPath, seenPath = v, true
		}
	}
	// An empty path or an empty entry means the current directory to the loader, so the old
	// value follows only when it has something.
	path := lib
	if oldPath != "" {
		path += ":" + oldPath
	}
	out = append(out, envLibraryPath+"="+path)
	if addr != "" {
		out = append(out, devselect.EnvAddr+"="+addr)
	}
	return out
}

// envLookup returns a getenv for env (KEY=VALUE entries): the value of a variable's first entry,
// which is what getenv reads in a program given env.
func envLookup(env []string) func(string) string {
	return func(key string) string {
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}
