/** Help text of each command (`switchboard <command> --help`). */
export const HELP: Readonly<Record<string, string>> = {
  start: `usage: switchboard start [--config <file>]
  Runs the gateway in the foreground (SIGTERM / SIGINT stop it gracefully).`,
  doctor: `usage: switchboard doctor [--config <file>]
  Checks a config without starting: the config is valid, every \${VAR} is set, the data dir is
  writable and no gateway runs on it, the port is free, the model API accepts the key (GET /v1/models,
  free), each Telegram / Slack account's token is accepted (getMe / auth.test). Prints a checklist
  with a fix for each failure. Exit: 78 invalid config, otherwise the number of failed checks (≤ 63).`,
  status: `usage: switchboard status [--token <operator token>] [--config <file>]
  The running gateway's channels, turns (now and today), pending approvals and pairing requests, and
  token use today (00:00 UTC), from its control API. Token: --token, SWITCHBOARD_TOKEN, or the
  first-start credentials file. Exit 69 when no gateway runs.`,
  token: `usage:
  switchboard token create --kind client --principal <name> [--role owner|admin|member|guest] [--name <n>] [--expires <12h|30d|ISO>]
  switchboard token create --kind operator --scopes read,write,admin,approvals,pairing [--name <n>] [--expires <12h|30d|ISO>]
  switchboard token list [--kind client|operator] [--active]
  switchboard token revoke <token id> [--cascade]
      [--token <operator token>] [--config <file>]
  create and revoke go through the running gateway's control API when one runs (its open sockets on a
  revoked token close at once) and write the database directly when none runs; list reads the
  database. --cascade also revokes every token the revoked one minted (and what those minted).`,
  principals: `usage:
  switchboard principals list
  switchboard principals create <name> [--role owner|admin|member|guest]
  switchboard principals set-role <name> <role>
  switchboard principals delete <name>
      [--token <operator token>] [--config <file>]
  set-role and delete go through the running gateway when one runs (its sockets close at once).`,
  backup: `usage: switchboard backup <file> [--force] [--config <file>]
  An online copy of the SQLite database (consistent while the gateway runs). The directory must
  exist; an existing file is kept unless --force.`,
  'migrate-storage': `usage: switchboard migrate-storage --from sqlite --to postgres [--url <postgres url>] [--config <file>]
  Copies a stopped gateway's SQLite database (<gateway.dataDir>/switchboard.db) into an empty
  PostgreSQL database: --url, else the config's storage.url, else DATABASE_URL. One transaction;
  each table's row count and sha256 checksum must match before it commits. Refused while a gateway
  runs on the data dir, and into a database that has any row. Prints each table's count and
  checksum; then set storage.kind to "postgres" and start the gateway (docs/operations.md).
  Exit: 2 usage, 78 config, 75 a gateway runs, 1 refused or failed (nothing written).`,
  pairing: `usage: switchboard pairing list [--status s] [--channel type:account] | approve <code> [--role r] | reject <code>
      [--token <operator token>] [--config <file>]
  Talks to the running gateway (approving answers the held messages).`,
};

/** The overview (`switchboard --help`). */
export const USAGE = `usage: switchboard <command> [options]   (switchboard <command> --help for details; --version)
  switchboard start [--config <file>]
  switchboard doctor [--config <file>]
  switchboard status [--token <t>]
  switchboard token create --kind client --principal <name> [--role r] [--name n] [--expires 30d]
  switchboard token create --kind operator --scopes read,write,admin,approvals,pairing [--name n] [--expires 30d]
  switchboard token list [--kind k] [--active]
  switchboard token revoke <token id> [--cascade]
  switchboard principals list | create <name> [--role r] | set-role <name> <role> | delete <name>
  switchboard backup <file> [--force]   (online copy of the SQLite database)
  switchboard migrate-storage --from sqlite --to postgres [--url <postgres url>]
  switchboard pairing list [--status s] [--channel type:account] | approve <code> [--role r] | reject <code>
Every command takes --config <file> (default: SWITCHBOARD_CONFIG, else config/switchboard.json5).`;
