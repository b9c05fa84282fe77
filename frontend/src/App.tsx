import { Route, Routes } from 'react-router-dom';
import { ActivityProvider } from './activityState';
import { AppStateProvider } from './appState';
import { ServerEventsProvider } from './serverEvents';
import Layout from './components/shell/Layout';
import HomePage from './components/library/HomePage';
import ChatPage from './components/classroom/ChatPage';
import SettingsPage from './components/machine_room/SettingsPage';
import DemoChoicePage from './components/machine_room/DemoChoicePage';
import LibraryPage from './components/library/LibraryPage';
import NotFoundPage from './components/shell/NotFoundPage';
import PracticePage from './components/practice/PracticePage';
import ExamPage from './components/practice/ExamPage';
import CreateSetDialog from './components/practice/CreateSetDialog';

export default function App() {
  return (
    <ServerEventsProvider>
      <AppStateProvider>
        <ActivityProvider>
          <Routes>
            <Route element={<Layout />}>
              <Route index element={<HomePage practiceDialog={CreateSetDialog} />} />
              <Route path="chat/:id" element={<ChatPage />} />
              <Route path="settings" element={<SettingsPage />} />
              <Route path="demo" element={<DemoChoicePage />} />
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
