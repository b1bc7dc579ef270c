export { DEFAULT_DEFERRAL, type DeferralSettings, overBudget, schemaBytes, TurnToolOffer } from './offer.js';
export { deferredToolsBlocks, oneLine } from './listing.js';
export { loadedNamesOf, loadedResult, LOADED_PREFIX, searchTools, TOOL_SEARCH, toolSearchTool, type ToolSearchOptions } from './search.js';
export { loadedToolNames } from './loaded.js';
