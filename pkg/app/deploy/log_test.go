package deploy

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/rs/zerolog"
)

// TestJournalEntryIsOneJSONObject: an action's journal entry says in
// MESSAGE the event's JSON object, like every other line of webhookd's
// journal, and carries the fields journalctl matches.
func TestJournalEntryIsOneJSONObject(t *testing.T) {
	var b bytes.Buffer
	zerolog.TimeFieldFormat = time.RFC3339Nano
	log := zerolog.New(&b).With().Timestamp().Str("run", "20261207T150000Z-abcdef").Logger()
	log.Info().Str("step", "stop").Str("op", "stop").Str("target", "web.service").Str("took", "1.2s").Msg("applied")

	msg, pri, vars := journalEntry(b.Bytes())
	t.Logf("MESSAGE=%s", msg)
	var ev map[string]any
	if err := json.Unmarshal([]byte(msg), &ev); err != nil {
		t.Fatalf("MESSAGE is not one JSON object: %v\n%s", err, msg)
	}
	if ev["message"] != "applied" || ev["op"] != "stop" || ev["target"] != "web.service" || ev["level"] != "info" {
		t.Errorf("MESSAGE lacks the event's fields: %s", msg)
	}
	if pri != journal.PriInfo {
		t.Errorf("priority %d, want info", pri)
	}
	for k, want := range map[string]string{"MESSAGE_ID": messageID, "SYSLET_RUN": "20261207T150000Z-abcdef", "SYSLET_STEP": "stop", "SYSLET_OP": "stop",
		"SYSLET_TARGET": "web.service", "SYSLET_RESULT": "applied", "SYSLET_TOOK": "1.2s"} {
		if vars[k] != want {
			t.Errorf("%s=%q, want %q", k, vars[k], want)
		}
	}
}
