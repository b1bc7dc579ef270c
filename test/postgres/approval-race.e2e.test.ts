// The approval-race e2e scenarios once more, with the gateway on PostgreSQL (issue 19, acceptance 2).
import './on-postgres.js';
import '../approval-race.e2e.test.js';
