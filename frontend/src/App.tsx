import { Route, Routes } from 'react-router-dom';
import { ActivityProvider } from './activityState';
import { AppStateProvider } from './appState';
import { ServerEventsProvider } from './serverEvents';
import Layout from './components/Layout';
import HomePage from './components/HomePage';
import ChatPage from './components/ChatPage';
import SettingsPage from './components/SettingsPage';
import LibraryPage from './components/LibraryPage';
import NotFoundPage from './components/NotFoundPage';

export default function App() {
  return (
    <ServerEventsProvider>
      <AppStateProvider>
        <ActivityProvider>
          <Routes>
            <Route element={<Layout />}>
              <Route index element={<HomePage />} />
              <Route path="chat/:id" element={<ChatPage />} />
              <Route path="settings" element={<SettingsPage />} />
              <Route path="library" element={<LibraryPage />} />
              <Route path="*" element={<NotFoundPage />} />
            </Route>
          </Routes>
        </ActivityProvider>
      </AppStateProvider>
    </ServerEventsProvider>
  );
}
