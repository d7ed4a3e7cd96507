/**
 * Company invoices (issue 18), as other features reach them: the companies' set-up (companies/) reads and
 * writes companies, products and unit assignments; reconciliation reads invoice tables.
 */
export type { CompanyRow, InvoicesDatabase, ProductsTable } from "./schema.js";
export {
  assignUnit,
  CompanyInput,
  createCompany,
  invoicesDb,
  loadCompanies,
  ProductInput,
  setProduct,
} from "./store.js";
export { renderCompanies } from "./views.js";
