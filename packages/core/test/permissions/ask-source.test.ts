import { describe, expect, it } from 'vitest';
import { ASK_SOURCES, isAskSource, mayAnswerAutomatically, whyPeopleOnly } from '../../src/permissions/ask-source.js';

describe('mayAnswerAutomatically', () => {
  it('lets automatic responders answer only the mode’s default ask', () => {
    expect(ASK_SOURCES.filter(mayAnswerAutomatically)).toEqual(['mode']);
    for (const s of ASK_SOURCES) expect(whyPeopleOnly(s)).not.toBe('');
  });
  it('recognises ask sources and nothing else', () => {
    expect(ASK_SOURCES.every(isAskSource)).toBe(true);
    for (const bad of ['tool', 'person', '__proto__', 'toString', '', null, 1]) expect(isAskSource(bad)).toBe(false);
  });
});
