// Package fleet is what syslet knows of a fleet as a whole: the labels a
// host carries (ring, role, site, …), read from a small file in its
// directory of the config repository; the selectors that pick hosts by
// them (role=web,site=fra); and promotion on a threshold, the rule that
// a ring's commit may move on once enough of its hosts run it.
//
// A selected set of hosts is waited on through a Reader: the forge's
// commit statuses (one context per host, ForgeReader) or Prometheus
// scraping every host's webhookd (one PromQL query per read,
// PrometheusReader). Both say the same thing of a host: it runs the
// commit (success), it failed or rolled back on it (failure), or it has
// said nothing final yet. Wait reads until the threshold is met, or can
// no longer be met, or its context ends; a host that never reported is
// named, and counts as not successful.
//
// Layer: ground. It imports the standard library and the ground packages
// forge (the statuses) and push (how a count or a percentage is written).
package fleet
