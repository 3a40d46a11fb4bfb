// Package testhost gives integration tests a real, disposable Linux host to deploy to: Debian trixie
// with systemd 257 as PID 1, rootful podman 5.4 with quadlet, and a container registry on the
// guest's 127.0.0.1:5000 that already holds localhost:5000/busybox:latest. A second platform,
// Debian testing (podman 5.8, systemd 262), is chosen by TESTHOST_RECIPE=testing for a whole
// process, or by OnRecipe for one test and its subtests.
//
// A host is a systemd-nspawn container booted from a cached base image (see testhost.sh and
// recipe.sh beside this file; the image lives in ~/.cache/syslet-testhost). Tests reach it over SSH
// as root:
//
//	func TestMain(m *testing.M) {
//		if err := testhost.Build(); err != nil { // builds or reuses the base image
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		os.Exit(m.Run())
//	}
//
//	func TestDeploy(t *testing.T) {
//		h := testhost.Start(t) // fresh instance, stopped by t.Cleanup even if the test fails
//		ref, err := h.MakeImage("web:v1", "marker-1") // localhost:5000/web:v1
//		...
//		cur, _ := h.JournalCursor()
//		h.MustRun(t, "systemctl start web.service")
//		log, _ := h.JournalSince(cur, "-u", "web.service")
//	}
//
// Start takes about 3–5 s. Several hosts may run at once (each has its own name, network
// namespace, registry and SSH port); on a 2-core machine keep it to two or three, but for a
// test that needs a fleet: StartN(t, 5) boots five at once for one test.
//
// # Cleanup
//
// Every host is stopped by t.Cleanup through testhost.sh down, which kills the instance's cgroup
// (systemd-nspawn, the guest and the SSH forwarder) and deletes its state. Each instance records
// the test binary's PID as its owner, so if the test process itself is killed, the next
// testhost.sh cleanup (run by the test tasks, .ci/run and [Sweep]) finds the instance by its dead
// owner and removes it.
//
// # Limits of the test host
//
// The guest shares this machine's kernel, and its cgroup2 tree has no controllers: podman cannot
// apply memory, pids or CPU limits there (Memory=, PidsLimit=, CPUQuota= and friends fail the
// container's start), so tests for them need a real VM. busybox httpd as a container's PID 1
// ignores SIGTERM (every stop waits podman's 10 s timeout): use RunInit=true or a process that
// handles SIGTERM. systemd refuses a unit's sixth start within a few seconds; reset-failed first.
// integration/README.md has the full list.
//
// The harness needs root, and a machine whose PID 1 is not systemd (it drives cgroupfs itself).
// Where it cannot run, Build and Start fail with the reason; they never skip.
//
// Layer: integration (test support). It imports nothing from syslet.
package testhost
