// The scripted model moved to @switchboard/testkit (packages/testkit/src/scripted-model.ts); this
// re-export keeps test files written against the old path working. Import from the testkit.
export { ScriptedModel, type Step } from '@switchboard/testkit';
