package cli

import (
	"runtime/debug"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "aaaa"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	bare := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}}
	for _, tc := range []struct {
		name                  string
		version, commit, date string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"dev build with VCS info", "dev", "", "", vcs, "tollgate dev\nrevision aaaa, modified (2026-01-02T03:04:05Z)\ngo1.26.0"},
		{"release stamp wins over VCS info", "1.2.3", "bbbb", "2026-11-27T10:00:00Z", vcs, "tollgate 1.2.3\nrevision bbbb (2026-11-27T10:00:00Z)\ngo1.26.0"},
		{"release stamp without VCS info (-buildvcs=false)", "1.2.3", "bbbb", "2026-11-27T10:00:00Z", bare, "tollgate 1.2.3 (module v1.2.3)\nrevision bbbb (2026-11-27T10:00:00Z)\ngo1.26.0"},
		{"date alone", "1.2.3", "", "2026-11-27T10:00:00Z", bare, "tollgate 1.2.3 (module v1.2.3)\nbuilt 2026-11-27T10:00:00Z\ngo1.26.0"},
		{"nothing recorded", "dev", "", "", bare, "tollgate dev (module v1.2.3)\ngo1.26.0"},
		{"no build info", "1.2.3", "bbbb", "2026-11-27T10:00:00Z", nil, "tollgate 1.2.3\nrevision bbbb (2026-11-27T10:00:00Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatVersion(tc.version, tc.commit, tc.date, tc.info); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
