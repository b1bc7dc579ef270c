/** Content blocks and messages in the Anthropic Messages API shape, as the loop keeps them. */
export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}
/** An image the person sent, inline (`source.type: "base64"`), as the Messages API takes it in user content. */
export interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string };
}
export type AssistantBlock = TextBlock | ToolUseBlock;
export type UserBlock = TextBlock | ToolResultBlock | ImageBlock;

export interface AssistantMessage {
  role: 'assistant';
  content: AssistantBlock[];
}
export interface UserMessage {
  role: 'user';
  content: UserBlock[];
}
export type Message = AssistantMessage | UserMessage;

export interface SystemBlock {
  type: 'text';
  text: string;
  /**
   * Ends the part of the system prompt that is the same for everyone (the operator's layers): the
   * request puts a prompt-cache breakpoint here too, so people share that prefix. Only the first
   * marked block counts; the last system block always gets one.
   */
  cacheBreakpoint?: boolean;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}

/** The text of a message's text blocks, joined. */
export function messageText(message: Message): string {
  return message.content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

/** The tool_use blocks of an assistant message, in the order the model asked for them. */
export function toolUses(message: AssistantMessage): ToolUseBlock[] {
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}
