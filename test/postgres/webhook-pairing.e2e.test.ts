// The webhook-pairing e2e scenarios once more, with the gateway on PostgreSQL (issue 19, acceptance 2).
import './on-postgres.js';
import '../webhook-pairing.e2e.test.js';
