package verdict

// Report is a verdict as every JSON document of a run carries it, at the
// top of the document: its machine name, and the exit code syslet exits
// with for it.
//
//	"verdict": "rolled-back",
//	"exit": 4,
//
// The document of an apply, an update, a rollback and a --diff
// (pkg/app/view's Outcome) embeds it; so does any other document that
// tells how a run ended, so that a reader (syslet push, a CI job) finds
// the ending in one place whatever the command.
type Report struct {
	Verdict Verdict `json:"verdict"`
	Exit    int     `json:"exit"`
}

// Report is the verdict as a document carries it; the zero Verdict (a
// run that has not ended) gives the zero Report.
func (v Verdict) Report() Report {
	if v == 0 {
		return Report{}
	}
	return Report{Verdict: v, Exit: v.Exit()}
}
