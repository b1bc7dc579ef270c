export { AGENTS_MD, type AskToLoad, type InstructionFile, InstructionGate, readAgentsMd } from './agents-md.js';
export { askToLoadFor, LOAD_INSTRUCTIONS } from './ask-load.js';
export { assembleSystem, type ChannelFacts, channelFacts, PERSON_LAYER_NOTE, type SystemLayers } from './layers.js';
export { foldersDownTo, instructionNote, NestedInstructions, notesIn, touchedFolder } from './nested.js';
export { isProfileField, parseProfile, PROFILE_FIELD_MAX, PROFILE_FIELDS, type ProfileField, profileLines, profileValueProblem } from './profile.js';
export {
  type InstructionServiceOptions,
  InstructionService,
  type InstructionSettings,
  type TurnInstructionContext,
  type TurnInstructions,
  type TurnInstructionSource,
} from './service.js';
export { type ProfileCommandResult, profileReply, runProfileCommand } from './profile-command.js';
