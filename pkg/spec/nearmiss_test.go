package spec

import "testing"

func TestNearMiss(t *testing.T) {
	known := []string{"apiVersion", "type", "name", "unit", "desiredState", "removalAllowed", "configFiles", "configDirs", "dropIns", "instances"}
	for k, want := range map[string]string{
		"configfiles":   "configFiles", // case
		"configFile":    "configFiles", // one deletion
		"cofnigFiles":   "configFiles", // neighbours swapped
		"configFilez":   "configFiles",
		"desiredstate":  "desiredState",
		"removalAlowed": "removalAllowed",
		"enabled":       "", // CUE users' entries: not a near miss
		"labels":        "",
		"description":   "",
		"nmae":          "name",
		"mode":          "",
	} {
		if got := nearMiss(k, known); got != want {
			t.Errorf("nearMiss(%q) = %q, want %q", k, got, want)
		}
	}
}
