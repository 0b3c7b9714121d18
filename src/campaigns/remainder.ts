// The statements live in src/db/queries/campaigns.ts (every D1 statement lives in src/db/).
export { failRemainderStatements, settleRecipientsStatements } from "../db/queries/campaigns";
