import './cspSafe';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router-dom';
import 'katex/dist/katex.min.css';
import './theme.css';
import './styles.css';
import App from './App';
import { followStoredTheme } from './components/machine_room/theme';

// Before the first paint: the stored theme choice (else the system's scheme, in CSS).
followStoredTheme();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <App />
    </BrowserRouter>
  </StrictMode>,
);
