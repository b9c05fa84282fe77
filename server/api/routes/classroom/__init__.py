"""The Classroom's routes: lessons (`/api/chat`, `/api/chats`)."""
