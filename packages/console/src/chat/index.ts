/** The web chat (members, at `/chat`): the router mounts `ChatPage` for client console sessions. */
export { ChatPage } from './chat-page';
