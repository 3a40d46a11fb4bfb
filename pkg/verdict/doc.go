// Package verdict names how a run of syslet ended, in one place, and says
// what each consumer calls that ending: the exit code of `syslet`, the
// result the run journal records, the kind of notification sent, and the
// result and stage webhookd shows for a deploy attempt. A run decides its
// verdict once (pkg/app/deploy); everything downstream reads this table
// rather than mapping errors or strings of its own.
//
// The verdict leaves the process as data (report.go): every JSON document
// of a run carries it as a Report ("verdict": its machine name, "exit":
// its exit code), and a document can travel beside a run's text in the
// same stream as one RFC 7464 record, which is how `syslet push` hears
// each host's verdict without reading a word of its text.
//
// Layer: ground. It imports only the ground packages whose vocabulary it
// maps to (pkg/runlog, pkg/notify).
package verdict
