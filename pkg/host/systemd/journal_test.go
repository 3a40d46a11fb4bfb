package systemd

import (
	"strings"
	"testing"
)

// The journal of a container's service that exited at once, as
// journalctl -o json prints it (fields trimmed to those LastLog reads):
// systemd's and podman's lines around the container's own two.
const crashJournal = `{"MESSAGE":"Starting web.service - web container...","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383829800000"}
{"MESSAGE":"2026-12-04 11:30:29 +0000 UTC container create b5c8 (image=localhost:5000/app:2, name=web)","SYSLOG_IDENTIFIER":"web","_PID":"331","__REALTIME_TIMESTAMP":"1796383829810000"}
{"MESSAGE":"Started web.service - web container.","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383829870000"}
{"MESSAGE":"hello from web\n","SYSLOG_IDENTIFIER":"web","_PID":"350","CONTAINER_NAME":"web","__REALTIME_TIMESTAMP":"1796383829879041"}
{"MESSAGE":[98,97,100,32,99,111,110,102,105,103,255],"SYSLOG_IDENTIFIER":"web","_PID":"350","CONTAINER_NAME":"web","__REALTIME_TIMESTAMP":"1796383829879100"}
{"MESSAGE":"b5c8b246693be2abf22bcb8b762557d4eb8a3639098c0591a434c9d57f52936b","SYSLOG_IDENTIFIER":"web","_PID":"331","__REALTIME_TIMESTAMP":"1796383829883138"}
{"MESSAGE":"2026-12-04 11:30:30 +0000 UTC container died b5c8 (image=localhost:5000/app:2, name=web)","SYSLOG_IDENTIFIER":"web","_PID":"356","__REALTIME_TIMESTAMP":"1796383830105897"}
{"MESSAGE":"web.service: Main process exited, code=exited, status=1/FAILURE","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383830200000"}
{"MESSAGE":"web.service: Failed with result 'exit-code'.","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383830200100"}
`

// A container's excerpt is its own output, then how systemd saw it end:
// no podman IDs or "container create" lines in between.
func TestExcerptIsTheContainersOwnOutput(t *testing.T) {
	got := excerpt(parseEntries([]byte(crashJournal)), 10)
	want := []string{
		"2026-12-04T11:30:29Z web[350]: hello from web",
		"2026-12-04T11:30:29Z web[350]: bad config?",
		"2026-12-04T11:30:30Z systemd[1]: web.service: Main process exited, code=exited, status=1/FAILURE",
		"2026-12-04T11:30:30Z systemd[1]: web.service: Failed with result 'exit-code'.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := excerpt(parseEntries([]byte(crashJournal)), 1); len(got) != 3 || !strings.Contains(got[0], "bad config") {
		t.Errorf("n=1: %q", got)
	}
}

// A service that is no container gets its last lines, whoever logged
// them.
func TestExcerptOfAPlainService(t *testing.T) {
	plain := `{"MESSAGE":"Starting x.service...","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383829800000"}
{"MESSAGE":"boom","SYSLOG_IDENTIFIER":"sh","_PID":"77","__REALTIME_TIMESTAMP":"1796383829810000"}
{"MESSAGE":"x.service: Failed with result 'exit-code'.","SYSLOG_IDENTIFIER":"systemd","_PID":"1","__REALTIME_TIMESTAMP":"1796383829820000"}
`
	got := excerpt(parseEntries([]byte(plain)), 2)
	if len(got) != 2 || !strings.HasSuffix(got[0], "sh[77]: boom") {
		t.Errorf("got %q", got)
	}
	if excerpt(nil, 5) != nil {
		t.Error("no entries gave lines")
	}
}
