"""The Workbench's pure parts (seed §5.1): what a worker's output must satisfy before it is
delivered, with no IO (the browser and the web are adapters in `server.agent.workbench`)."""
