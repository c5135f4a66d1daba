package cli

import (
	"fmt"
	"runtime/debug"
)

// versionString is the version, the module version and the VCS revision
// the binary was built from, as the build info records them.
func versionString() string {
	s := "tollgate " + Version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return s
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		s += " (module " + v + ")"
	}
	var rev, at, dirty string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			at = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev != "" {
		s += fmt.Sprintf("\nrevision %s%s", rev, dirty)
		if at != "" {
			s += " (" + at + ")"
		}
	}
	return s + "\n" + info.GoVersion
}
