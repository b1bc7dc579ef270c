// The Telegram offset cursor (legacy import, restart resumes from the row) once more, with the gateway on PostgreSQL.
import './on-postgres.js';
import '../telegram-offset-cursor.e2e.test.js';
