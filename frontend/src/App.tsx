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
import PracticePage from './components/practice/PracticePage';
import ExamPage from './components/practice/ExamPage';

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
              <Route path="practice" element={<PracticePage />} />
              <Route path="practice/:id" element={<ExamPage />} />
              <Route path="*" element={<NotFoundPage />} />
            </Route>
          </Routes>
        </ActivityProvider>
      </AppStateProvider>
    </ServerEventsProvider>
  );
}
