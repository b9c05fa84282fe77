import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

// The FastAPI backend (../server) serves the built files from ../server/static
// and answers /api/*. In dev, `npm run dev` proxies /api to a locally running backend:
// LH_DEV_SERVER names it (default http://127.0.0.1:8765, the backend's own default).
const devServer = process.env.LH_DEV_SERVER || 'http://127.0.0.1:8765';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: '../server/static',
    emptyOutDir: true,
    rolldownOptions: {
      output: {
        // A few stable vendor chunks instead of one ~1 MB file.
        codeSplitting: {
          groups: [
            // src/cspSafe.ts must run before the vendor chunks evaluate (see the file).
            { name: 'boot', test: /src[\\/]cspSafe\.ts$/, priority: 5 },
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler|react-router|react-router-dom|cookie|set-cookie-parser)[\\/]/, priority: 4 },
            { name: 'katex', test: /node_modules[\\/]katex[\\/]/, priority: 3 },
            { name: 'ai-sdk', test: /node_modules[\\/](ai|@ai-sdk|@opentelemetry|zod|swr|throttleit|use-sync-external-store|eventsource-parser|@standard-schema)[\\/]/, priority: 2 },
            { name: 'graph', test: /node_modules[\\/](d3-[a-z]+|fuse\.js)[\\/]/, priority: 2 },
            { name: 'markdown', test: /node_modules[\\/]/, priority: 1 },
          ],
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': {
        target: devServer,
        changeOrigin: false,
      },
    },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
