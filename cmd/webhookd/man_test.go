package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/docpage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/webhookd"
)

// webhookd(8) is generated from webhookd's flag definitions (flagSet),
// the comments of its configuration's fields (webhookd/config.go), its
// metrics (webhookd/metrics.go), its exit codes (main.go) and the example
// configuration the package installs; `go tool task golden` (-update)
// rewrites it, and this test fails when it differs or does not lint.
var update = flag.Bool("update", false, "rewrite packaging/man/webhookd.8")

const (
	manPath       = "../../packaging/man/webhookd.8"
	exampleConfig = "../../packaging/webhookd.yaml"
	serviceUnit   = "../../packaging/webhookd.service"
)

// defaults spells the package's default constants in a field comment.
var defaults = strings.NewReplacer(
	"DefaultListen", "`"+webhookd.DefaultListen+"`",
	"DefaultStateDir", "`"+webhookd.DefaultStateDir+"`",
	"DefaultBranch", "`"+webhookd.DefaultBranch+"`",
)

// configList lists the fields of type name of webhookd's configuration,
// prefixed (repos[].).
func configList(t *testing.T, name, prefix string) docpage.List {
	t.Helper()
	fields, err := docpage.Fields("../../webhookd/config.go", name, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var l docpage.List
	for _, f := range fields {
		if f.Key == "" || f.Key == "-" {
			continue
		}
		if f.Doc == "" {
			t.Errorf("webhookd/config.go: %s.%s has no comment to document it", name, f.Name)
		}
		l = append(l, docpage.Item{Term: "`" + prefix + f.Key + "`", Text: defaults.Replace(f.Doc)})
	}
	return l
}

func webhookdPage(t *testing.T) docpage.Page {
	t.Helper()
	var o options
	fs := flagSet(&o, io.Discard)
	var opts docpage.List
	var synopsis []string
	fs.VisitAll(func(f *flag.Flag) {
		arg, help := flag.UnquoteUsage(f)
		term := "`--" + f.Name + "`"
		syn := "--" + f.Name
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool {
			term += " " + arg
			syn += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" {
			help += " (default `" + f.DefValue + "`)"
		}
		opts = append(opts, docpage.Item{Term: term, Text: help})
		synopsis = append(synopsis, "["+syn+"]")
	})
	codes, err := docpage.Consts("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var exits docpage.List
	for _, c := range codes {
		if strings.HasPrefix(c.Name, "exit") {
			exits = append(exits, docpage.Item{Term: c.Value, Text: c.Doc})
		}
	}
	metrics, err := docpage.Literals("../../webhookd/metrics.go", "Name", "Help")
	if err != nil {
		t.Fatal(err)
	}
	var mlist docpage.List
	for _, m := range metrics {
		mlist = append(mlist, docpage.Item{Term: "`" + m[0] + "`", Text: m[1]})
	}
	outcomes, err := docpage.Consts("../../webhookd/metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	var answers docpage.List
	for _, c := range outcomes {
		if strings.HasPrefix(c.Name, "Outcome") {
			answers = append(answers, docpage.Item{Term: "`" + c.Value + "`", Text: c.Doc})
		}
	}
	example, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	p := docpage.Page{Name: "webhookd", Section: 8, Summary: "deploy this host from signed git pushes", Date: docpage.Date, Source: docpage.Source, Manual: docpage.Manual}
	p.Sections = []docpage.Section{
		{Title: "SYNOPSIS", Blocks: []docpage.Block{docpage.Lines{"`webhookd` " + strings.Join(synopsis, " ")}}},
		{Title: "DESCRIPTION", Blocks: []docpage.Block{
			docpage.Para("`webhookd` turns a push to a configuration repository into a deploy of exactly the pushed commit. " +
				"It verifies the forge's signature (GitHub `X-Hub-Signature-256`, Gitea `X-Gitea-Signature`, Forgejo `X-Forgejo-Signature`, GitLab `X-Gitlab-Token`), " +
				"fetches the repository into a private checkout, checks out that commit (refused unless it is on the configured branch) and applies the repository's spec directory " +
				"through the same code as `syslet DIR`, under the host's apply lock, recording `git REPO@COMMIT` as the run's source in the run journal. " +
				"One deploy per repository runs at a time; pushes that arrive meanwhile coalesce into one deploy of the newest commit, and a push older than what is applied never rolls the host back."),
			docpage.Para("It runs as the systemd service `webhookd.service` (`Type=notify`, with a watchdog); `systemctl stop webhookd` lets a running deploy finish. " +
				"The package installs the unit but does not enable it: edit `" + layout.WebhookdConfig + "`, check it with `webhookd --check`, then `systemctl enable --now webhookd`."),
		}},
		{Title: "OPTIONS", Blocks: []docpage.Block{opts}},
		{Title: "CONFIGURATION", Blocks: []docpage.Block{
			docpage.Para("The configuration is YAML; an unknown field is an error, and so is every problem found, each naming its field. Secret, key and token files must be mode 0600; secrets are never printed."),
			configList(t, "Config", ""),
			docpage.Para("With `tls`:"),
			configList(t, "TLSConfig", "tls."),
			docpage.Para("Each entry of `repos`:"),
			configList(t, "Repo", "repos[]."),
			docpage.Para("The example the package installs:"),
			docpage.Code(string(example)),
		}},
		{Title: "HTTP API", Blocks: []docpage.Block{
			docpage.List{
				{Term: "`POST /hooks/`NAME", Text: fmt.Sprintf("a forge's push event for the repository NAME (at most %d bytes). The answer is `202` when the push is queued for a deploy or ignored with its reason (another branch, a tag, not a push), `200` for a ping, `401` when unsigned or wrongly signed, `409` for a delivery id seen before, `413` for a larger body, `404` for an unknown repository, `429` when too many deliveries wait.", webhookd.MaxBody)},
				{Term: "`GET /status`", Text: "per repository: `lastApplied`, the last attempt's `result`, plan `summary`, `durationSeconds`, `runId`, `lastError`, the `queued` commit"},
				{Term: "`GET /healthz`", Text: "200 while the daemon answers"},
				{Term: "`GET /metrics`", Text: "Prometheus metrics (below)"},
			},
		}},
		{Title: "METRICS", Blocks: []docpage.Block{mlist, docpage.Para("The `outcome` label of `webhookd_deliveries_total`:"), answers}},
		{Title: "EXIT STATUS", Blocks: []docpage.Block{exits}},
		{Title: "FILES", Blocks: []docpage.Block{docpage.List{
			{Term: "`" + layout.WebhookdConfig + "`", Text: "the configuration (a conffile of the package: an upgrade never overwrites it)"},
			{Term: "`" + layout.WebhookdState + "/`REPO", Text: "the private checkout of each repository"},
			{Term: "`" + layout.WebhookdState + "/.status/`", Text: "the last status of each repository"},
			{Term: "`/usr/lib/systemd/system/webhookd.service`", Text: "the unit"},
		}}},
		{Title: "SEE ALSO", Blocks: []docpage.Block{docpage.Para(strings.Join([]string{docpage.Ref("syslet", 1), docpage.Ref("syslet-specs", 5), docpage.Ref("systemctl", 1), docpage.Ref("journalctl", 1)}, ", "))}},
	}
	return p
}

func TestManPageIsGenerated(t *testing.T) {
	if err := docpage.CheckFile(manPath, []byte(webhookdPage(t).Roff()), *update); err != nil {
		t.Fatal(err)
	}
	if err := docpage.LintMan(manPath); err != nil {
		t.Error(err)
	}
}

// TestUnitPointsAtManPage: the packaged unit's Documentation= names this page.
func TestUnitPointsAtManPage(t *testing.T) {
	unit, err := os.ReadFile(serviceUnit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "Documentation=man:webhookd(8)") {
		t.Errorf("%s: Documentation= does not name webhookd(8)", serviceUnit)
	}
}
