package cli

import (
	"cmp"
	"fmt"
	"runtime/debug"
)

// Commit and Date are the revision and build date a release build stamps
// in with -ldflags "-X github.com/tollgate/tollgate/internal/cli.Commit=…"
// (scripts/release does, as it does Version): stamped, they do not depend
// on the VCS information the go command records only with -buildvcs.
var (
	Commit = ""
	Date   = ""
)

// versionString is the version, the module version and the revision the
// binary was built from: the stamped Commit and Date, else what the build
// info records of the VCS.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(Version, Commit, Date, info)
}

// formatVersion is versionString for given stamps and build info (nil when
// the binary has none).
func formatVersion(version, commit, date string, info *debug.BuildInfo) string {
	s := "tollgate " + version
	if info == nil {
		if commit != "" {
			s += "\nrevision " + commit
			if date != "" {
				s += " (" + date + ")"
			}
		}
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
	if commit != "" {
		// The stamp names what was released; the build info may be off
		// (-buildvcs=false) or describe another checkout.
		rev, at, dirty = commit, cmp.Or(date, at), ""
	} else if date != "" {
		at = date
	}
	if rev != "" {
		s += fmt.Sprintf("\nrevision %s%s", rev, dirty)
		if at != "" {
			s += " (" + at + ")"
		}
	} else if at != "" {
		s += "\nbuilt " + at
	}
	return s + "\n" + info.GoVersion
}
