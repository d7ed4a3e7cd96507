/**
 * Company invoices (issue 18), as other features reach them: the companies' set-up (companies/) reads and
 * writes companies, products and unit assignments; reconciliation reads invoice tables.
 */
export { type CompanyRow, loadCompanies, renderCompanies } from "./pages.js";
export type { InvoicesDatabase, ProductsTable } from "./schema.js";
export {
  assignUnit,
  CompanyInput,
  createCompany,
  invoicesDb,
  ProductInput,
  setProduct,
} from "./store.js";
