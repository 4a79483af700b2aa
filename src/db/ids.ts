/** The form of the gateway's row ids (UUIDs, any version): what is checked before an id reaches a query. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
