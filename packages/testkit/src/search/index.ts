export {
  defaultHits,
  type FakeHit,
  type FakeSearchApi,
  type FakeSearxng,
  type SearchRequest,
  startFakeBrave,
  startFakeSearxng,
  startFakeTavily,
} from './fake-search.js';
