package main

import "testing"

// Class 6: a corrupted or forged journal must not make a plan delete
// what syslet never managed. A resumed delete is carried forward only
// when a unit carrying syslet's marker names that very object and allows
// its deletion; anything else is left alone, with a note saying why.
func TestHostileResumes(t *testing.T) { runHostile(t, hostileResumes()) }

func hostileResumes() []hostileCase {
	const run = "20261201T000000Z-abcdef"
	unfinished := func(actions string) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			e.journal(`{"type":"intent","run":"` + run + `","time":"2026-12-01T00:00:00Z","source":"s","actions":[` + actions + `]}`)
			return e.diff()
		}
	}
	leftAlone := "nothing shows it is syslet's to delete, so it is left alone (delete it by hand if it should go)"
	// Nothing is deleted: step 6 stays empty and the plan removes nothing.
	noDelete := []string{"delete podman resources  delete", "carried", "1 to remove"}
	return []hostileCase{
		{name: "a forged delete of a volume no unit names", setup: unfinished(`{"i":0,"step":6,"op":"delete-volume","target":"victim-volume"}`), code: exitOK,
			want: []string{"previous run " + run + " did not finish; none of its 1 unfinished action(s) is left to do", "previous run " + run + " meant to delete volume victim-volume, but no unit carrying syslet's marker names it", leftAlone, "No changes detected."}, not: noDelete},
		{name: "a forged delete of a network no unit names", setup: unfinished(`{"i":0,"step":6,"op":"delete-network","target":"victim-net"}`), code: exitOK,
			want: []string{"meant to delete network victim-net", leftAlone, "No changes detected."}, not: noDelete},
		{name: "a forged delete of an image no unit names", setup: unfinished(`{"i":0,"step":6,"op":"delete-image","target":"localhost/victim:v1"}`), code: exitOK,
			want: []string{"localhost/victim:v1", leftAlone, "No changes detected."}, not: noDelete},
		{name: "a forged delete naming a managed container unit as a network's", setup: unfinished(`{"i":0,"step":6,"op":"delete-network","target":"victim-net","unit":"web.container"}`), code: exitOK,
			want: []string{"meant to delete network victim-net, but the installed unit web.container is not a network unit of syslet's naming it with ReclaimPolicy=Delete", leftAlone}, not: noDelete},
		{name: "a forged delete naming a build unit as a volume's", setup: unfinished(`{"i":0,"step":6,"op":"delete-volume","target":"victim-volume","unit":"app.build"}`), code: exitOK,
			want: []string{"meant to delete volume victim-volume", leftAlone}, not: noDelete},
		{name: "a forged delete naming a hand-written volume unit", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/hand.volume", "[Volume]\nVolumeName=victim-volume\n", 0o644)
			return unfinished(`{"i":0,"step":6,"op":"delete-volume","target":"victim-volume","unit":"hand.volume"}`)(e)
		}, code: exitOK, want: []string{"meant to delete volume victim-volume", leftAlone}, not: noDelete},
		{name: "a forged removal of a unit syslet never wrote", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/hand.container", "[Container]\nImage=busybox\n", 0o644)
			return unfinished(`{"i":0,"step":5,"op":"remove-unit","target":"/etc/containers/systemd/hand.container","unit":"hand.container"}`)(e)
		}, code: exitOK, want: []string{"hand.container"}, not: []string{"remove /etc/containers/systemd/hand.container"}},
		{name: "a forged delete with a traversal in its target", setup: unfinished(`{"i":0,"step":6,"op":"delete-volume","target":"../../victim"}`), code: exitOK,
			want: []string{"meant to delete volume ../../victim", leftAlone}, not: noDelete},
	}
}
