// The page a browser gets at an address where no instance lives (the gateway answers 404 with it, its
// link to the cluster's sign-up page already filled in: gateway console/routes.ts): names the address.
import './style.css';

const address = document.getElementById('address');
if (address) address.textContent = location.hostname;
