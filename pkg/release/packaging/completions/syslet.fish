# fish completion for syslet: generated from cmd/syslet's command table and flag definitions (syslet completion); do not edit
complete -c syslet -e
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a validate -d 'check specs without touching any host, podman\'s quadlet converter included'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a render -d 'write the files a host would get under DIR'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a host-key -d 'print this host\'s age recipient (encrypt secrets for it)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a adopt -d 'print v1 specs for hand-written quadlet files (every quadlet type; a template\'s instance links; each unit\'s drop-in directory)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a push -d 'validate here, then plan/apply on each TARGET ([user@]host[:port]) over SSH; with --hosts-dir each TARGET gets DIR/<host>/ plus DIR/common/ (no TARGET: every host directory)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a ssh-command -d 'authorized_keys forced command: runs only "syslet --diff --stdin", "syslet --stdin", the saved-plan forms syslet push uses ("syslet --diff --stdin --out -", "syslet --plan - --stdin", "syslet --diff --plan - --stdin") and the two reads of its --pause ("syslet --diff --stdin --detailed-exitcode", "syslet status --stdin --output json")'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a status -d 'how systemd sees the services the specs run (default /etc/syslet/config.json): state, last result, restarts, InvocationID; read-only, never waits for an apply'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a show -d 'print a plan saved by syslet --diff --out FILE as --diff printed it, with the input and host state it was made from'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a rollback -d 'apply a kept generation again, each container pinned to the image it ran then: the one before the host\'s current generation, or that of RUN'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a notify-test -d 'send an example event to every notification target of /etc/syslet/syslet.json and print what came of each'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a history -d 'recent runs from the run journal, one run\'s actions, or (--specs) the specs a kept generation applied'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a backups -d 'the volume backups kept in /var/lib/syslet/backups, oldest first: the export an apply takes of each volume before it deletes or recreates it'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a restore -d 'bring a volume\'s backup back (the newest, or BACKUP as syslet backups names it), with the services of the containers mounting it stopped around it'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a version -d 'the version, commit and build of this syslet'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a schema -d 'print the JSON Schema of spec format v1'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a completion -d 'print the shell completion script (the package installs them; for a bare binary, source its output)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -f -a help -d 'this usage, one command\'s help, or (--format markdown) the whole command-line reference'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -F
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l diff -d 'print the plan and stop; nothing changes, no lock is taken'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l stdin -d 'read specs from stdin (also: PATH "-"); an apply stores them in /etc/syslet/config.json (0600) for later plain runs'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l root -r -a '(__fish_complete_directories)' -d 'manage the files under DIR instead of / (no systemd or podman is read; only --diff)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l output -r -f -d 'print as FORMAT: text, or json (one JSON document on stdout: the plan, and the result of an apply; the human plan and log go to stderr)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l detailed-exitcode -d 'with --diff: exit 3 when changes are pending'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l yes -d 'do not ask before applying (only asked when stdin and stderr are a terminal)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l source -r -f -d 'record TEXT as the specs\' origin in the run journal (default: the path)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l quadlet -r -F -d 'stage with the quadlet generator at PATH'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l lock-timeout -r -f -d 'wait at most D for another apply to finish (0: for ever)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l timeout -r -f -d 'give a started or reloaded unit D to become active'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l pull-timeout -r -f -d 'give one image pull at most D'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l stop-timeout -r -f -d 'give one stop at most D'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l reload-timeout -r -f -d 'give the daemon-reload at most D'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l dial-timeout -r -f -d 'give connecting to systemd at most D'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l read-timeout -r -f -d 'give reading the host\'s state to plan, and each read of the health gate, at most D'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l podman -r -f -d 'with --root: check the units against podman VERSION (default 5.4); on a host, syslet asks the host\'s podman for its version'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l allow-removals -d 'allow a plan that removes all managed units, or more than half of them when there are more than four (refused otherwise)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l force -d 'overwrite managed files that were edited by hand (drift)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l out -r -F -d 'with --diff: save the plan to FILE (0600; - prints it on stdout and the human plan on stderr) with its input\'s digest and the host state it was made from, for --plan'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l plan -r -F -d 'apply exactly the plan saved in FILE (by --diff --out; - reads it from stdin, before the specs with --stdin), given the same input: refused, changing nothing, if the host or the input changed since; with --diff, only say whether it still holds'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l keep-stage -d 'keep the staging directory (the staged units and what podman\'s generator made of them) and print its path; a failed staging always keeps it, and the newest 5 kept ones are left'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l keep-backups -r -f -d 'keep the newest N backups of each volume (syslet backups); an apply exports a volume before it deletes or recreates it'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l max-input -r -f -d 'refuse spec input larger than BYTES (also for validate and render)'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l metrics-file -r -F -d 'with --diff: a drift check: write the units that differ (by kind), the time and the notification counters to FILE as Prometheus text (node_exporter\'s textfile collector), and send one drift notification when units first differ'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l soak -r -f -d 'after starting containers, require them to stay up (no restart, still active) for D; 0: only up'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l rollback -r -f -d 'what a failed health gate does: POLICY auto applies the last good generation again (each container pinned to the image it ran), never leaves the host as the run left it'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l keep-generations -r -f -d 'keep the last N good generations to roll back to'
complete -c syslet -n 'not __fish_seen_subcommand_from validate render host-key adopt push ssh-command status show rollback notify-test history backups restore version schema completion help' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from validate' -F
complete -c syslet -n '__fish_seen_subcommand_from validate' -l output -r -f -d 'print as FORMAT: text, or json (valid, podman, and per finding source, path, rule, message, severity)'
complete -c syslet -n '__fish_seen_subcommand_from validate' -l podman -r -f -d 'check against podman VERSION (the oldest release syslet supports by default)'
complete -c syslet -n '__fish_seen_subcommand_from validate' -l strict -d 'treat warnings as errors (for CI)'
complete -c syslet -n '__fish_seen_subcommand_from validate' -l max-input -r -f -d 'refuse spec input larger than BYTES'
complete -c syslet -n '__fish_seen_subcommand_from validate' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from render' -F
complete -c syslet -n '__fish_seen_subcommand_from render' -l out -r -a '(__fish_complete_directories)' -d 'write under DIR as if it were / (required; never / itself)'
complete -c syslet -n '__fish_seen_subcommand_from render' -l podman -r -f -d 'check the units against podman VERSION'
complete -c syslet -n '__fish_seen_subcommand_from render' -l max-input -r -f -d 'refuse spec input larger than BYTES'
complete -c syslet -n '__fish_seen_subcommand_from render' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from host-key' -l root -r -a '(__fish_complete_directories)' -d 'read the host key and syslet\'s files under DIR as if it were /'
complete -c syslet -n '__fish_seen_subcommand_from host-key' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from adopt' -F
complete -c syslet -n '__fish_seen_subcommand_from adopt' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from push' -F
complete -c syslet -n '__fish_seen_subcommand_from push' -l diff -d 'plan only, on every host'
complete -c syslet -n '__fish_seen_subcommand_from push' -l hosts-dir -r -a '(__fish_complete_directories)' -d 'take each host\'s specs from DIR/<host>/ plus DIR/common/'
complete -c syslet -n '__fish_seen_subcommand_from push' -l parallel -r -f -d 'work on N hosts at once'
complete -c syslet -n '__fish_seen_subcommand_from push' -l remote-command -r -f -d 'run CMD on the hosts (e.g. "sudo syslet")'
complete -c syslet -n '__fish_seen_subcommand_from push' -s F -r -F -d 'read ssh settings from FILE (default ~/.ssh/config, /etc/ssh/ssh_config)'
complete -c syslet -n '__fish_seen_subcommand_from push' -s i -r -F -d 'authenticate with the private key FILE (repeatable; IdentityFile and SSH_AUTH_SOCK are used too)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l known-hosts -r -F -d 'check host keys against FILE only (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l accept-new -d 'pin the key of a host not in known_hosts yet (never a changed key)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l connect-timeout -r -f -d 'give connect, host key check and login at most D'
complete -c syslet -n '__fish_seen_subcommand_from push' -l command-timeout -r -f -d 'give the remote plan or apply at most D (0: no limit)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l allow-empty -d 'push a set with no specs (removes every removable syslet unit)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l out -r -a '(__fish_complete_directories)' -d 'with --diff: save each host\'s plan as DIR/<host>.plan (0600), for --plan DIR'
complete -c syslet -n '__fish_seen_subcommand_from push' -l plan -r -a '(__fish_complete_directories)' -d 'apply on each host exactly its plan saved in DIR/<host>.plan (by push --diff --out DIR), given the same specs; a host whose state or input changed since refuses its plan ("stale" in the table) and the others go ahead; with --diff, only check whether each still holds'
complete -c syslet -n '__fish_seen_subcommand_from push' -l batch -r -f -d 'roll out in batches of these sizes, in target order: LIST of host counts or percentages of the targets, the last repeating (1,25%: one host, then a quarter at a time)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l max-failed -r -f -d 'start no further host once more than N hosts (or N% of the targets) have failed (default with --batch: 0, the first failure stops the rollout)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l pause -r -f -d 'with --batch: wait D after each batch but the last, then look at its hosts again (services up and not restarted, no drift) before the next'
complete -c syslet -n '__fish_seen_subcommand_from push' -l verify -r -F -d 'send nothing unless the specs are a clean git checkout whose HEAD carries a good SSH signature by a key of the allowed-signers FILE (git\'s format, as webhookd\'s verify.allowedSigners)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l output -r -f -d 'print as FORMAT: text, or json (one document on stdout after the last host: each host\'s batch, outcome, run IDs and durations, and why the rollout stopped; the hosts\' output and the table go to stderr)'
complete -c syslet -n '__fish_seen_subcommand_from push' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from ssh-command' -l diff-only -d 'allow only what changes nothing: the plan (syslet --diff --stdin), saving it (--out -), checking a saved one (--diff --plan - --stdin), the plan with its exit code (--diff --stdin --detailed-exitcode) and the services\' health (syslet status --stdin --output json)'
complete -c syslet -n '__fish_seen_subcommand_from ssh-command' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from status' -F
complete -c syslet -n '__fish_seen_subcommand_from status' -l stdin -d 'read specs from stdin (also: PATH "-")'
complete -c syslet -n '__fish_seen_subcommand_from status' -l output -r -f -d 'print as FORMAT: text, or json (every service with its active and sub state, last result, InvocationID and NRestarts)'
complete -c syslet -n '__fish_seen_subcommand_from status' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from show' -F
complete -c syslet -n '__fish_seen_subcommand_from show' -l output -r -f -d 'print as FORMAT: text (as --diff printed the plan), or json (the saved plan file, checked and indented)'
complete -c syslet -n '__fish_seen_subcommand_from show' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l diff -d 'print the rollback\'s plan and stop; nothing changes'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l output -r -f -d 'print as FORMAT: text or json'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l yes -d 'do not ask before applying (only asked when stdin and stderr are a terminal)'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l root -r -a '(__fish_complete_directories)' -d 'the host\'s root DIR (only with --diff)'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l lock-timeout -r -f -d 'wait at most D for another apply to finish (0: for ever)'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l timeout -r -f -d 'give a started unit D to become active'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l soak -r -f -d 'after starting containers, require them to stay up (no restart, still active) for D; 0: only up'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l rollback -r -f -d 'what a failed health gate does: POLICY auto applies the last good generation again (each container pinned to the image it ran), never leaves the host as the run left it'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l keep-generations -r -f -d 'keep the last N good generations to roll back to'
complete -c syslet -n '__fish_seen_subcommand_from rollback' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from notify-test' -l root -r -a '(__fish_complete_directories)' -d 'read syslet\'s settings under DIR as if it were /'
complete -c syslet -n '__fish_seen_subcommand_from notify-test' -l event -r -f -d 'send an example event of KIND (test, started, succeeded, failed, rolled-back, drift) to every target, whatever its events'
complete -c syslet -n '__fish_seen_subcommand_from notify-test' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from history' -l output -r -f -d 'print as FORMAT: text or json'
complete -c syslet -n '__fish_seen_subcommand_from history' -l specs -d 'print the specs RUN applied, as its kept generation holds them (without RUN: the newest generation\'s, the last run that ended ok)'
complete -c syslet -n '__fish_seen_subcommand_from history' -l root -r -a '(__fish_complete_directories)' -d 'read the journal under DIR as if it were /'
complete -c syslet -n '__fish_seen_subcommand_from history' -s n -r -f -d 'show the last N runs (0: all)'
complete -c syslet -n '__fish_seen_subcommand_from history' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from backups' -l output -r -f -d 'print as FORMAT: text or json'
complete -c syslet -n '__fish_seen_subcommand_from backups' -l root -r -a '(__fish_complete_directories)' -d 'read the backups under DIR as if it were /'
complete -c syslet -n '__fish_seen_subcommand_from backups' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from restore' -l output -r -f -d 'print as FORMAT: text or json'
complete -c syslet -n '__fish_seen_subcommand_from restore' -l lock-timeout -r -f -d 'wait at most D for an apply to finish (0: for ever)'
complete -c syslet -n '__fish_seen_subcommand_from restore' -l timeout -r -f -d 'give each stopped and started unit D'
complete -c syslet -n '__fish_seen_subcommand_from restore' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from version' -l output -r -f -d 'print as FORMAT: text or json'
complete -c syslet -n '__fish_seen_subcommand_from version' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from schema' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from completion' -f -a bash
complete -c syslet -n '__fish_seen_subcommand_from completion' -f -a fish
complete -c syslet -n '__fish_seen_subcommand_from completion' -f -a zsh
complete -c syslet -n '__fish_seen_subcommand_from completion' -l help -d 'show this command\'s help'
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a validate
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a render
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a host-key
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a adopt
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a push
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a ssh-command
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a status
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a show
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a rollback
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a notify-test
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a history
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a backups
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a restore
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a version
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a schema
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a completion
complete -c syslet -n '__fish_seen_subcommand_from help' -f -a help
complete -c syslet -n '__fish_seen_subcommand_from help' -l help -d 'show this command\'s help'
