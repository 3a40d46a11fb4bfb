package proxy

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestDefaultPorts(t *testing.T) {
	seen := map[int]string{}
	for _, name := range []string{"web", "api", "shop", "web2", "a"} {
		p := DefaultPorts(name)
		if p != DefaultPorts(name) {
			t.Fatalf("%s: ports differ between calls", name)
		}
		if p[1] != p[0]+1 || p[0] < PortBase || p[1] >= 32768 {
			t.Errorf("%s: ports %v, want two side by side in [%d, 32768)", name, p, PortBase)
		}
		seen[p[0]] = name
	}
	if len(seen) < 4 {
		t.Errorf("five names drew %d pairs", len(seen))
	}
}

func TestSlotNames(t *testing.T) {
	if got := SlotName("my-web", Green); got != "my-web-green" {
		t.Errorf("SlotName = %q", got)
	}
	if Other(Blue) != Green || Other(Green) != Blue {
		t.Error("Other")
	}
}

func TestConfig(t *testing.T) {
	sites := []Site{
		{Name: "web", Listen: "0.0.0.0:80", Mode: HTTP, Ports: Ports{20010, 20011}},
		{Name: "db", Listen: "127.0.0.1:5432", Mode: TCP, Ports: Ports{20100, 20101}},
	}
	a := Config(sites)
	if b := Config([]Site{sites[1], sites[0]}); !bytes.Equal(a, b) {
		t.Fatal("the order of the sites changes the configuration")
	}
	cfg := string(a)
	for _, want := range []string{
		"stats socket /run/syslet-proxy/admin.sock mode 600 level admin expose-fd listeners",
		"server-state-file /var/lib/syslet/proxy/server-state",
		"load-server-state-from-file global",
		"frontend web\n    mode http\n    bind 0.0.0.0:80\n    option forwardfor\n    default_backend web\n",
		"backend web\n    mode http\n    server blue 127.0.0.1:20010 disabled\n    server green 127.0.0.1:20011 disabled\n",
		"frontend db\n    mode tcp\n    bind 127.0.0.1:5432\n    default_backend db\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("the configuration lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Index(cfg, "frontend db") > strings.Index(cfg, "frontend web") {
		t.Error("sites not in name order")
	}
	unit := string(Unit())
	for _, want := range []string{"Type=notify", "ExecStart=/usr/sbin/haproxy -Ws -f /etc/syslet/proxy/haproxy.cfg",
		"ExecReload=/usr/sbin/haproxy -c -q -f /etc/syslet/proxy/haproxy.cfg\nExecReload=/bin/kill -USR2 $MAINPID", "[X-Syslet]\nProxy=haproxy\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
}

func TestParseState(t *testing.T) {
	data := "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight\n" +
		"3 web 1 blue 127.0.0.1 2 4 1\n" + // readied since the configuration disabled it
		"3 web 2 green 127.0.0.1 0 5 1\n" + // disabled
		"4 api 1 blue 127.0.0.1 2 12 1\n" + // draining
		"4 api 2 green 127.0.0.1 2 0 1\n" +
		"5 both 1 blue 127.0.0.1 2 4 1\n" +
		"5 both 2 green 127.0.0.1 2 4 1\n"
	st, err := ParseState([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	for backend, want := range map[string][]string{"web": {Blue}, "api": {Green}, "both": {Blue, Green}, "none": nil} {
		if got := st.Ready(backend); !slices.Equal(got, want) {
			t.Errorf("Ready(%s) = %v, want %v", backend, got, want)
		}
	}
	if st, err := ParseState(nil); err != nil || st != nil {
		t.Errorf("no file: %v, %v", st, err)
	}
	for _, bad := range []string{"2\n# be_name\n", "1\n3 web 1 blue\n", "1\n# be_name srv_name srv_admin_state srv_op_state\nweb blue x 2\n"} {
		if _, err := ParseState([]byte(bad)); err == nil {
			t.Errorf("ParseState(%q): no error", bad)
		}
	}
}
